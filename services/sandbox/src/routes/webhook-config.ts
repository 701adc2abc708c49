import type { HttpServer } from '@switchboard/kit';
import { SetWebhookRequestSchema, WebhookConfigSchema } from '../domain/wire.ts';
import type { SandboxState } from '../store/store.ts';
import { networkRoute, numberOf } from './network-auth.ts';

export function registerWebhookConfigRoutes(app: HttpServer, deps: { state: SandboxState }): void {
  app.post(
    '/v1/configs/webhook',
    networkRoute(deps.state, {
      tags: ['webhook'],
      summary: 'Set the webhook URL',
      description:
        'The number’s single webhook. Every message and status is POSTed there with `X-Hub-Signature-256`, ' +
        'retried with backoff until it answers 200.',
      body: SetWebhookRequestSchema,
      response: { 200: WebhookConfigSchema },
    }),
    async (req) => {
      const number = numberOf(req);
      number.webhook = { url: req.body.url, headers: req.body.headers ?? {} };
      return { url: req.body.url, ...(req.body.headers ? { headers: req.body.headers } : {}) };
    },
  );

  app.get(
    '/v1/configs/webhook',
    networkRoute(deps.state, {
      tags: ['webhook'],
      summary: 'Read the webhook URL',
      response: { 200: WebhookConfigSchema },
    }),
    async (req) => {
      const hook = numberOf(req).webhook;
      return hook ? { url: hook.url, headers: hook.headers } : { url: '' };
    },
  );
}
