/**
 * `@switchboard/testkit`: what test files use. Everything of `./tools` (usable anywhere) plus
 * the helpers bound to the vitest run: the run's NATS and a fresh database per test file.
 * Scripts, benchmarks and the global set-up import `@switchboard/testkit/tools` and
 * `@switchboard/testkit/infra` instead, which never load vitest.
 */
export * from './prepared-plans.ts';
export * from './provided.ts';
export * from './tools.ts';
