import type { RpcContract } from '@switchboard/proto';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { ChatsDatabase } from '../db.ts';

export type Db = Kysely<ChatsDatabase>;

/** A request of a contract as its handler receives it (validated). */
export type RequestOf<C extends RpcContract> = z.output<C['request']>;
