import { z } from 'zod';
import { defineCommand, defineConsumer } from './contracts.ts';
import { chatsRpc, foundPage } from './requests.ts';
import { posixSecondsSchema } from './time.ts';

/**
 * One event-log entry on the bus: who did what to which object. Stored by chats, which serves
 * `audit_logs/` as `AuditLogSchema` (the same fields, `at` in POSIX seconds).
 */
export const AuditEntrySchema = z.object({
  id: z.uuid(),
  action: z
    .string()
    .regex(/^[a-z_]+\.[a-z_]+$/)
    .describe('`<object>.<verb>`: user.created, group.deleted, chat.assigned, chat.resolved…'),
  actor: z.object({ user_id: z.number().int(), username: z.string() }).nullable(),
  target_type: z.enum([
    'user',
    'group',
    'chat',
    'message',
    'webhook',
    'tag',
    'inbound',
    'contact_provider',
    'saved_response',
  ]),
  target_id: z.string(),
  details: z.record(z.string(), z.unknown()),
  /** Epoch milliseconds (a bus payload; the API answers seconds, see `AuditLogSchema`). */
  at: z.number().int().positive(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** An event-log entry as `audit_logs/` answers it. */
export const AuditLogSchema = AuditEntrySchema.extend({
  at: posixSecondsSchema('when it happened.'),
}).meta({ id: 'AuditLog' });
export type AuditLog = z.infer<typeof AuditLogSchema>;

export const auditRecorded = defineCommand('audit', AuditEntrySchema);

export const auditConsumer = defineConsumer({
  durable: 'chats-audit',
  message: auditRecorded,
  ackWaitSeconds: 30,
  maxAckPending: 256,
  // No attempt limit: an entry is kept through a database outage of any length.
});

export const AuditListRequest = z.object({
  limit: z.number().int().min(1).max(100),
  offset: z.number().int().min(0),
  target_type: AuditEntrySchema.shape.target_type.optional(),
  target_id: z.string().optional(),
  action: z.string().optional(),
});

export const AuditListReply = foundPage(AuditLogSchema);

export const auditList = chatsRpc('audit_list', {
  request: AuditListRequest,
  response: AuditListReply,
});
