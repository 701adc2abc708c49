import { z } from 'zod';
import { serviceRpcs } from './contracts.ts';
import { PrincipalSchema } from './principal.ts';

/** Defines a request chats serves. */
export const chatsRpc = serviceRpcs('chats');

/** A request served for a caller: the caller's principal (the service checks it again) and its fields. */
export const withPrincipal = <T extends z.ZodRawShape>(shape: T) =>
  z.object({ principal: PrincipalSchema, ...shape });

/** limit/offset of a list: the gateway clamps `limit` to the page size maximum before asking. */
export const PageRequest = {
  limit: z.number().int().min(1).max(100),
  offset: z.number().int().min(0),
};

/** A page of a list as the owning service answers it: its items and how many the list holds in all. */
export const foundPage = <T extends z.ZodType>(item: T) =>
  z.object({ count: z.number().int(), results: z.array(item) });
