// openapi-typescript builds its output with the TypeScript 5 compiler API; the repository compiles with
// TypeScript 7 (no JS compiler API), so this test-only package carries its own TypeScript 5 for it.
export { astToString, default as openapiTS } from 'openapi-typescript';
