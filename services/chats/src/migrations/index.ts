import type { Migration } from '@switchboard/kit';
import { m0001NetworkWebhooks } from './0001_network_webhooks.ts';

export const chatsMigrations: readonly Migration[] = [m0001NetworkWebhooks];
