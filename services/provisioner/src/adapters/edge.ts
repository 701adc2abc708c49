import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '@switchboard/kit';

export interface EdgeTarget {
  port: number;
}

export interface ActivationPages {
  /** GET `/activation/<token>`: the page, or why it cannot be used. */
  show(subdomain: string, token: string): Promise<{ status: number; html: string }>;
  /** POST `/activation/<token>` (form `password`, `password_again`). */
  submit(subdomain: string, token: string, form: URLSearchParams): Promise<{ status: number; html: string }>;
}

export interface EdgeOptions {
  log: Logger;
  baseDomain: string;
  /** The running instance behind a subdomain, if any. */
  resolve(subdomain: string): Promise<EdgeTarget | undefined>;
  activation: ActivationPages;
}

const ACTIVATION = /^\/activation\/([A-Za-z0-9_-]{10,200})\/?$/;
const MAX_FORM_BYTES = 16 * 1024;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function sendHtml(res: ServerResponse, status: number, html: string): void {
  res
    .writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
      'referrer-policy': 'no-referrer',
    })
    .end(html);
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** The subdomain a Host header names under the base domain (`acme.localhost:8088` → `acme`). */
export function subdomainOf(host: string | undefined, baseDomain: string): string | undefined {
  if (!host) return undefined;
  const name = host.replace(/:\d+$/, '').toLowerCase();
  const suffix = `.${baseDomain}`;
  if (!name.endsWith(suffix)) return undefined;
  const sub = name.slice(0, -suffix.length);
  return /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(sub) ? sub : undefined;
}

/**
 * The host-routing edge in front of the local instances: `<subdomain>.<base domain>` is
 * proxied to that instance's port (HTTP/1.1, bodies streamed both ways), and
 * `/activation/<token>` on an instance's host is the activation page, served here.
 */
export function createEdge(opts: EdgeOptions): Server {
  const { log } = opts;
  return createServer((req, res) => {
    void (async () => {
      const subdomain = subdomainOf(req.headers.host, opts.baseDomain);
      if (!subdomain) {
        sendJson(res, 404, { detail: `No instance answers at ${req.headers.host ?? '(no host)'}.` });
        return;
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const activation = ACTIVATION.exec(path);
      if (activation?.[1]) {
        const token = activation[1];
        if (req.method === 'GET') {
          const page = await opts.activation.show(subdomain, token);
          sendHtml(res, page.status, page.html);
        } else if (req.method === 'POST') {
          const form = await readForm(req);
          const page = form
            ? await opts.activation.submit(subdomain, token, form)
            : { status: 413, html: 'Too large.' };
          sendHtml(res, page.status, page.html);
        } else {
          sendJson(res, 405, { detail: 'Method Not Allowed' });
        }
        return;
      }
      const target = await opts.resolve(subdomain);
      if (!target) {
        sendJson(res, 404, { detail: `No instance answers at ${subdomain}.${opts.baseDomain}.` });
        return;
      }
      const upstream = request(
        {
          host: '127.0.0.1',
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, 'x-forwarded-host': req.headers.host ?? '' },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', (err) => {
        log.debug({ err, subdomain }, 'instance did not answer through the edge');
        if (!res.headersSent) sendJson(res, 503, { detail: 'The instance is not answering; retry later.' });
        else res.destroy();
      });
      req.pipe(upstream);
    })().catch((err: unknown) => {
      log.error({ err }, 'edge request failed');
      if (!res.headersSent) sendJson(res, 500, { detail: 'Internal Server Error' });
      else res.destroy();
    });
  });
}
