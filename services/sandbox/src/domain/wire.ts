// The Cloud API shapes and the network client live in proto (the single source of truth for
// schemas); the sandbox names them through this one module.
export * from '@switchboard/proto';
export * from '@switchboard/proto/network';
