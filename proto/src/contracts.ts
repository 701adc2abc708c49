import type { z } from 'zod';
import type { InstanceId } from './instance.ts';
import type { StreamKey } from './streams.ts';
import { subjects } from './subjects.ts';

/** A message published to a JetStream stream: where it goes and what it must look like. */
export interface StreamContract<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly stream: StreamKey;
  readonly subject: (i: InstanceId) => string;
  readonly schema: S;
}

/** A durable pull consumer reading one contract's subject. */
export interface ConsumerContract<S extends z.ZodType = z.ZodType> {
  readonly durable: string;
  readonly message: StreamContract<S>;
  /**
   * Seconds without an acknowledgement or an in-progress signal before NATS redelivers a
   * message. `bus.consume` signals progress while a handler runs, so this is how long a
   * crashed worker's messages take to come back, not a limit on how long a handler may take.
   */
  readonly ackWaitSeconds: number;
  /**
   * Messages the server hands out unacknowledged at once (the durable's `max_ack_pending`),
   * including those waiting for a delayed nak: a delayed nak keeps its slot at the server.
   */
  readonly maxAckPending: number;
  /**
   * Handlers running at once in one process (default: `maxAckPending`). The bus pulls only as
   * many messages as there are free handlers, so a message waiting for a delayed retry holds
   * a server slot (`maxAckPending`) but never a handler: keep `maxAckPending` well above this
   * when handlers nak with long delays, or retried messages starve the healthy ones.
   */
  readonly concurrency?: number;
  /**
   * Handler failures (thrown errors) before the bus gives up and terminates the message;
   * unlimited when omitted. Dispositions a handler returns (`nak`, `term`) never count.
   */
  readonly maxDeliver?: number | undefined;
}

/** A core-NATS request/reply operation served by one service. */
export interface RpcContract<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly subject: (i: InstanceId) => string;
  readonly request: Req;
  readonly response: Res;
  /**
   * A request field that makes the operation safe to repeat (`idempotency_key`): callers fill
   * it when empty, so a request whose outcome they cannot know (no answer in time) can be
   * retried with the same key and never acts twice.
   */
  readonly retryKeyField?: string;
}

export function defineStream<S extends z.ZodType>(c: StreamContract<S>): StreamContract<S> {
  return c;
}

/** An event of the EVENTS stream on `sb.<i>.events.<kind>`, named `events.<kind>` after its subject. */
export function defineEvent<S extends z.ZodType>(kind: string, schema: S): StreamContract<S> {
  return { name: `events.${kind}`, stream: 'events', subject: (i) => subjects.events(i, kind), schema };
}

/**
 * A command of the COMMANDS stream on `sb.<i>.cmd.<kind>`, named `cmd.<kind>` after its subject.
 * With `scope`, always that scope's subject, whatever instance the bus serves (partner commands).
 */
export function defineCommand<S extends z.ZodType>(
  kind: string,
  schema: S,
  scope?: InstanceId,
): StreamContract<S> {
  return {
    name: `cmd.${kind}`,
    stream: 'commands',
    subject: (i) => subjects.command(scope ?? i, kind),
    schema,
  };
}

export function defineConsumer<S extends z.ZodType>(c: ConsumerContract<S>): ConsumerContract<S> {
  return c;
}

/**
 * The definer of one service's request/reply operations: operation `op` is named `<service>.<op>`
 * after its subject `sb.<i>.rpc.<service>.<op>` (with `scope`, always that scope's subject,
 * whatever instance the bus serves).
 */
export function serviceRpcs(service: string, scope?: InstanceId) {
  return <Req extends z.ZodType, Res extends z.ZodType>(
    op: string,
    c: Omit<RpcContract<Req, Res>, 'name' | 'subject'>,
  ): RpcContract<Req, Res> => ({
    name: `${service}.${op}`,
    subject: (i) => subjects.rpc(scope ?? i, service, op),
    ...c,
  });
}

export function defineRpc<Req extends z.ZodType, Res extends z.ZodType>(
  c: RpcContract<Req, Res>,
): RpcContract<Req, Res> {
  return c;
}
