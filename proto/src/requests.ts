import { z } from 'zod';
import type { InstanceId } from './instance.ts';
import { PrincipalSchema } from './principal.ts';
import { subjects } from './subjects.ts';

/** The subject of a request chats serves, `sb.<i>.rpc.chats.<op>`. */
export const chatsRpc = (op: string) => (i: InstanceId) => subjects.rpc(i, 'chats', op);

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
