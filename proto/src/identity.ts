import { z } from 'zod';
import { defineEvent, serviceRpcs } from './contracts.ts';
import { PrincipalSchema } from './principal.ts';

const gatewayRpc = serviceRpcs('gateway');

/**
 * Internal operation: create the instance's configurator user (or find it) and return its
 * Auth Token. The provisioner calls it once the instance is up and delivers the token in the
 * partner's `token` event.
 */
export const ensureConfigurator = gatewayRpc('ensure_configurator', {
  request: z.object({ username: z.string().min(1).max(150) }),
  response: z.object({ user_id: z.number().int(), username: z.string(), token: z.string() }),
});

/**
 * Internal operation: the current principal of a user, or null when the user is unknown or
 * deactivated. The fan-out asks it to decide what a user's webhook may receive.
 */
export const principalLookup = gatewayRpc('principal', {
  request: z.object({ user_id: z.number().int().positive() }),
  response: z.object({ principal: PrincipalSchema.nullable() }),
});

/**
 * A user's rights changed (role, permissions, groups, assignments, activation), or a group
 * vanished (`user_ids` empty: anyone may be affected). Services that cache principals drop them.
 */
export const IdentityChangedSchema = z.object({
  user_ids: z.array(z.number().int().positive()),
  at: z.number().int().positive(),
});
export type IdentityChanged = z.infer<typeof IdentityChangedSchema>;

export const identityChanged = defineEvent('identity', IdentityChangedSchema);
