import { createHash } from 'node:crypto';
import { Agent, interceptors, request } from 'undici';

export interface OutboundHttp {
  /** POSTs a webhook body; resolves with the receiver's status, rejects when it did not answer. */
  postWebhook(url: string, body: string, headers: Record<string, string>): Promise<number>;
  /** Downloads a media `link` the business gave, as the network does before delivering. */
  fetchLink(url: string, maxBytes: number): Promise<{ data: Buffer; contentType: string; sha256: string }>;
  close(): Promise<void>;
}

export class LinkFetchError extends Error {
  override readonly name = 'LinkFetchError';
}

/** The sandbox's own HTTP client (undici, not global fetch): webhooks out, media links in. */
export function createOutboundHttp(opts: { webhookTimeoutMs: number; linkTimeoutMs: number }): OutboundHttp {
  const agent = new Agent({ connections: 32, keepAliveTimeout: 4_000 });
  const following = agent.compose(interceptors.redirect({ maxRedirections: 3 }));

  return {
    async postWebhook(url, body, headers) {
      const res = await request(url, {
        method: 'POST',
        body,
        headers,
        dispatcher: agent,
        headersTimeout: opts.webhookTimeoutMs,
        bodyTimeout: opts.webhookTimeoutMs,
        signal: AbortSignal.timeout(opts.webhookTimeoutMs),
      });
      await res.body.dump();
      return res.statusCode;
    },

    async fetchLink(url, maxBytes) {
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(url, {
          method: 'GET',
          dispatcher: following,
          headersTimeout: opts.linkTimeoutMs,
          bodyTimeout: opts.linkTimeoutMs,
          signal: AbortSignal.timeout(opts.linkTimeoutMs),
        });
      } catch (err) {
        throw new LinkFetchError(
          `the link could not be fetched: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new LinkFetchError(`the link answered HTTP ${res.statusCode}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        size += buf.length;
        if (size > maxBytes) {
          res.body.destroy();
          throw new LinkFetchError(`the media is larger than ${maxBytes} bytes`);
        }
        chunks.push(buf);
      }
      const data = Buffer.concat(chunks);
      const type = res.headers['content-type'];
      return {
        data,
        contentType: (Array.isArray(type) ? type[0] : type) ?? 'application/octet-stream',
        sha256: createHash('sha256').update(data).digest('hex'),
      };
    },

    async close() {
      await agent.close();
    },
  };
}
