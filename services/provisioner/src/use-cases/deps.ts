import type { Logger, Mailer, NatsConnection, OutboxRelay, SecretBox } from '@switchboard/kit';
import type { Bus } from '@switchboard/proto/bus';
import type { PartnerHubClient } from '@switchboard/proto/network';
import type { Kysely } from 'kysely';
import type { PartnerEventSender } from '../adapters/partner-events.ts';
import type { Runtime } from '../adapters/runtime.ts';
import type { ProvisionerConfig } from '../config.ts';
import type { ProvisionerDatabase } from '../store/db.ts';

/** Public addresses of an instance behind the edge. */
export interface PublicUrls {
  baseDomain(subdomain: string): string;
  healthCheck(subdomain: string): string;
  activation(subdomain: string, token: string): string;
}

export interface UseCaseDeps {
  db: Kysely<ProvisionerDatabase>;
  /** The partner scope's bus. */
  bus: Bus;
  nc: NatsConnection;
  log: Logger;
  config: ProvisionerConfig;
  runtime: Runtime;
  hub: PartnerHubClient;
  events: PartnerEventSender;
  mailer: Mailer;
  /** Seals instance secrets and partners' signing secrets. */
  box: SecretBox;
  urls: PublicUrls;
  outbox: OutboxRelay;
  /** A free loopback port for a new instance. */
  freePort(): Promise<number>;
}

export const OUTBOX_TABLE = 'provisioner_outbox';
