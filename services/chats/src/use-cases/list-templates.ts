import type { Logger } from '@switchboard/kit';
import { type listTemplates as contract, posixSeconds, ServiceError } from '@switchboard/proto';
import type { NetworkClient } from '@switchboard/proto/network';
import type { RequestOf } from './types.ts';

/** The templates last read from the network, kept per process. */
export interface TemplateCache {
  current?: { at: number; list: Array<{ name: string }> };
}

/**
 * The network's templates, read again when the cache is older than `templateCacheSeconds` or
 * a refresh is asked for; when the network cannot be read, the cached list (if any) answers.
 */
export async function listTemplates(
  deps: { log: Logger; network: NetworkClient; templateCacheSeconds: number; templates: TemplateCache },
  r: RequestOf<typeof contract>,
) {
  const cache = deps.templates;
  let templates = cache.current;
  const fresh = templates && Date.now() - templates.at < deps.templateCacheSeconds * 1000;
  if (!fresh || r.refresh || !templates) {
    try {
      const res = await deps.network.listTemplates();
      templates = { at: Date.now(), list: res.waba_templates };
      cache.current = templates;
    } catch (err) {
      deps.log.warn({ err }, 'templates not read from the network');
      if (!templates)
        throw ServiceError.unavailable('network', 'Templates could not be read from the network.', {
          cause: err,
        });
    }
  }
  return {
    count: templates.list.length,
    fetched_at: posixSeconds(templates.at),
    results: templates.list.slice(r.offset, r.offset + r.limit),
  };
}
