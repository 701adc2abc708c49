import { defineMigration } from '@switchboard/kit';
import { sql } from 'kysely';

/**
 * One live instance per port: a stopped instance keeps its port, and a new one given the same
 * (free at that moment) would receive the other's traffic through the edge and its health check.
 */
export const m0003InstancePortKey = defineMigration(
  '0003_instance_port_key',
  sql`create unique index instances_port_key on instances (port) where port is not null and status <> 'deleted'`,
);
