import { Agent } from 'undici';
import { webhookConnector } from './ssrf-guard.ts';

/**
 * An undici dispatcher for requests to user-given URLs (contact providers, push services):
 * every connection goes through the SSRF guard of `webhookConnector`, and no answer may be
 * larger than `maxResponseBytes`. Services that do not depend on undici themselves call
 * `agent.request({origin, path, …})` on it.
 */
export function createGuardedAgent(opts: {
  allowPrivateTargets: boolean;
  connectTimeoutMs: number;
  maxResponseBytes?: number;
  connections?: number;
}): Agent {
  return new Agent({
    connect: webhookConnector({
      allowPrivateTargets: opts.allowPrivateTargets,
      connectTimeoutMs: opts.connectTimeoutMs,
    }),
    maxResponseSize: opts.maxResponseBytes ?? 1024 * 1024,
    connections: opts.connections ?? 8,
  });
}
