import { z } from 'zod';

/**
 * An instance id is embedded in every subject, stream and durable name, so it is restricted
 * to characters that are legal in all three (no dots, wildcards or whitespace).
 */
export const InstanceIdSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'lower-case letters, digits and dashes, at most 40 characters');

export type InstanceId = z.infer<typeof InstanceIdSchema>;

export function instanceId(value: string): InstanceId {
  return InstanceIdSchema.parse(value);
}
