// Chats as a library, for the single-process inbox (services/inbox), the cross-service tests in
// test/ and tools: what another package may use of chats is exported here.
export { type ChatsConfig, ChatsConfigSchema, loadConfig } from './config.ts';
export type { ChatsDatabase } from './db.ts';
export { createGroupCommit, type GroupCommit } from './domain/group-commit.ts';
export { chatsMigrations } from './migrations/index.ts';
export { type Chats, createChats, createContactProviderSecretsBox } from './service.ts';
