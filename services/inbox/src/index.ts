// The single-process inbox as a library, for tests and tools.
export { type InboxConfig, InboxConfigSchema, loadConfig } from './config.ts';
export { runInbox } from './server.ts';
