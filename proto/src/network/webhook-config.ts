import { z } from 'zod';

/** `POST /v1/configs/webhook`: the number's single webhook URL (and extra headers sent with each POST). */
export const SetWebhookRequestSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string().min(1).max(100), z.string().max(1000)).optional(),
});
export type SetWebhookRequest = z.infer<typeof SetWebhookRequestSchema>;

export const WebhookConfigSchema = z.looseObject({
  url: z.string(),
  headers: z.record(z.string(), z.string()).optional(),
});
export type WebhookConfig = z.infer<typeof WebhookConfigSchema>;
