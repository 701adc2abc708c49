import type { Migration } from '@switchboard/kit';
import { m0001NetworkWebhooks } from './0001_network_webhooks.ts';
import { m0002AuditLogs } from './0002_audit_logs.ts';
import { m0003Messaging } from './0003_messaging.ts';
import { m0004Reliability } from './0004_reliability.ts';
import { m0005Media } from './0005_media.ts';
import { m0006Organisation } from './0006_organisation.ts';

export const chatsMigrations: readonly Migration[] = [
  m0001NetworkWebhooks,
  m0002AuditLogs,
  m0003Messaging,
  m0004Reliability,
  m0005Media,
  m0006Organisation,
];
