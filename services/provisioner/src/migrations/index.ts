import type { Migration } from '@switchboard/kit';
import { m0001Provisioning } from './0001_provisioning.ts';

export const provisionerMigrations: readonly Migration[] = [m0001Provisioning];
