export { startAuditLog } from './audit-log.ts';
export type { ChatsDatabase } from './db.ts';
export { startInboundConsumer } from './inbound.ts';
export { chatsMigrations } from './migrations/index.ts';
export { startRpc } from './rpc.ts';
export { startDeliveryWorker } from './send.ts';
