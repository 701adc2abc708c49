export { startAuditLog } from './audit-log.ts';
export type { ChatsDatabase } from './db.ts';
export { chatsMigrations } from './migrations/index.ts';
