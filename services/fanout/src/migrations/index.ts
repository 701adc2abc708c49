import type { Migration } from '@switchboard/kit';
import { m0001Webhooks } from './0001_webhooks.ts';

export const fanoutMigrations: readonly Migration[] = [m0001Webhooks];
