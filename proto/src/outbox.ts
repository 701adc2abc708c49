import type { Bus } from './bus.ts';
import type { StreamContract } from './contracts.ts';

/** A message an outbox relay hands over: the contract by name, so rows stay plain data. */
export interface OutboxPublication {
  readonly contract: string;
  readonly payload: unknown;
  readonly key: string;
}

/**
 * The relay's publish step for a service's outbox: looks the contract up by name and publishes
 * through the bus (validated, traced, `Nats-Msg-Id` = the row's key). A row naming a contract
 * this build does not know is an error the relay retries, so an old row is never dropped by a
 * newer build that forgot a contract.
 */
export function outboxPublisher(
  bus: Bus,
  contracts: readonly StreamContract[],
): (m: OutboxPublication) => Promise<void> {
  const byName = new Map(contracts.map((c) => [c.name, c]));
  return async (m) => {
    const contract = byName.get(m.contract);
    if (!contract) throw new Error(`outbox row for unknown contract ${m.contract}`);
    await bus.publish(contract, m.payload, { idempotencyKey: m.key });
  };
}
