import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'proto/src/**/*.test.ts',
      'kit/src/**/*.test.ts',
      'services/*/src/**/*.test.ts',
      'services/*/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
