import { z } from 'zod';
import { defineRpc } from './contracts.ts';
import { subjects } from './subjects.ts';

/**
 * Internal operation: create the instance's configurator user (or find it) and return its
 * Auth Token. The provisioner calls it once the instance is up and delivers the token in the
 * partner's `token` event.
 */
export const ensureConfigurator = defineRpc({
  name: 'gateway.identity.ensure_configurator',
  subject: (i) => subjects.rpc(i, 'gateway', 'ensure_configurator'),
  request: z.object({ username: z.string().min(1).max(150) }),
  response: z.object({ user_id: z.number().int(), username: z.string(), token: z.string() }),
});
