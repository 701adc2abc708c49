import type { Migration } from '@switchboard/kit';
import { m0001Provisioning } from './0001_provisioning.ts';
import { m0002MailAttempts } from './0002_mail_attempts.ts';
import { m0003InstancePortKey } from './0003_instance_port_key.ts';

export const provisionerMigrations: readonly Migration[] = [
  m0001Provisioning,
  m0002MailAttempts,
  m0003InstancePortKey,
];
