import { configDefaults, defineConfig } from 'vitest/config';

/**
 * `unit`: tests that need no infrastructure (no NATS, no PostgreSQL, no global set-up), run
 * alone by `npm run test:unit`. Pure functions beside the code, the cross-service checks that
 * need nothing running, and the import rules.
 */
const unitInTest = ['test/imports.test.ts', 'test/secret-keys.test.ts', 'test/layout.test.ts'];
const unit = [
  'proto/src/**/*.test.ts',
  'chat-export/src/**/*.test.ts',
  'chat-export/test/**/*.test.ts',
  'kit/src/**/*.test.ts',
  'services/*/src/**/*.test.ts',
  ...unitInTest,
];

/** Tests beside the code that do need NATS or PostgreSQL: they run in `integration`. */
const besideCodeWithInfrastructure = [
  'proto/src/bus.test.ts',
  'proto/src/reply-mux.test.ts',
  'kit/src/db.test.ts',
  'kit/src/prepared-statements.test.ts',
];

export default defineConfig({
  test: {
    // Inherited by both projects.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Integration files mostly wait on child processes, NATS and PostgreSQL: on this 2-core
    // machine one file at a time (vitest's default here) used 45 % of the CPU for 7 minutes.
    maxWorkers: 3,
    projects: [
      {
        test: {
          name: 'unit',
          include: unit,
          exclude: [...configDefaults.exclude, ...besideCodeWithInfrastructure],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['services/*/test/**/*.test.ts', 'test/**/*.test.ts', ...besideCodeWithInfrastructure],
          exclude: [...configDefaults.exclude, ...unitInTest],
          // One nats-server and one PostgreSQL for the run, a migrated template database.
          globalSetup: ['test/global-setup.ts'],
        },
      },
    ],
  },
});
