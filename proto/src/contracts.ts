import type { z } from 'zod';
import type { InstanceId } from './instance.ts';
import type { StreamKey } from './streams.ts';

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
  /** Seconds a delivery may stay unacknowledged before NATS redelivers it. */
  readonly ackWaitSeconds: number;
  readonly maxAckPending: number;
  /** Deliveries before the bus gives up and terminates the message (handler errors only). */
  readonly maxDeliver: number;
}

/** A core-NATS request/reply operation served by one service. */
export interface RpcContract<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly subject: (i: InstanceId) => string;
  readonly request: Req;
  readonly response: Res;
}

export function defineStream<S extends z.ZodType>(c: StreamContract<S>): StreamContract<S> {
  return c;
}

export function defineConsumer<S extends z.ZodType>(c: ConsumerContract<S>): ConsumerContract<S> {
  return c;
}

export function defineRpc<Req extends z.ZodType, Res extends z.ZodType>(
  c: RpcContract<Req, Res>,
): RpcContract<Req, Res> {
  return c;
}
