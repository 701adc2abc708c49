import type { Migration } from '@switchboard/kit';
import { m0001Identity } from './0001_identity.ts';

export const gatewayMigrations: readonly Migration[] = [m0001Identity];
