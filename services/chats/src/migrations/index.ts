import type { Migration } from '@switchboard/kit';
import { m0001NetworkWebhooks } from './0001_network_webhooks.ts';
import { m0002AuditLogs } from './0002_audit_logs.ts';

export const chatsMigrations: readonly Migration[] = [m0001NetworkWebhooks, m0002AuditLogs];
