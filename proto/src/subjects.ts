import type { InstanceId } from './instance.ts';

/**
 * Subject layout. Every subject starts with `sb.<instance>.`, so a consumer or subscription of
 * one instance can never match another instance's traffic on a shared NATS server.
 *
 *   sb.<i>.waba.inbound            raw network webhook bodies          (stream INBOUND)
 *   sb.<i>.events.<kind>           domain events for the fan-out        (stream EVENTS)
 *   sb.<i>.cmd.<kind>              durable commands between services    (stream COMMANDS)
 *   sb.<i>.rpc.<service>.<op>      request/reply, core NATS, not stored
 */
export const subjects = {
  root: (i: InstanceId) => `sb.${i}`,
  wabaInbound: (i: InstanceId) => `sb.${i}.waba.inbound`,
  events: (i: InstanceId, kind: string) => `sb.${i}.events.${kind}`,
  command: (i: InstanceId, kind: string) => `sb.${i}.cmd.${kind}`,
  rpc: (i: InstanceId, service: string, op: string) => `sb.${i}.rpc.${service}.${op}`,
} as const;
