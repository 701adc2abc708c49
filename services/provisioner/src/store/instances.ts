import type { InstanceStatus } from '@switchboard/proto';
import { type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { InstancesTable, ProvisionerDatabase } from './db.ts';

export type InstanceRow = Selectable<InstancesTable>;

export async function instanceById(
  db: Kysely<ProvisionerDatabase>,
  id: string,
): Promise<InstanceRow | undefined> {
  return db.selectFrom('instances').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function partnerInstance(
  db: Kysely<ProvisionerDatabase>,
  partnerId: string,
  id: string,
): Promise<InstanceRow | undefined> {
  return db
    .selectFrom('instances')
    .selectAll()
    .where('id', '=', id)
    .where('partner_id', '=', partnerId)
    .executeTakeFirst();
}

/** "Available" instances of a partner (every one not deleted), oldest first. */
export async function partnerInstancesPage(
  db: Kysely<ProvisionerDatabase>,
  partnerId: string,
  offset: number,
  limit: number,
): Promise<{ rows: InstanceRow[]; total: number }> {
  const base = db
    .selectFrom('instances')
    .where('partner_id', '=', partnerId)
    .where('status', '<>', 'deleted');
  const [rows, count] = await Promise.all([
    base.selectAll().orderBy('created_at').orderBy('id').offset(offset).limit(limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

export async function updateInstance(
  db: Kysely<ProvisionerDatabase>,
  id: string,
  patch: Updateable<InstancesTable>,
): Promise<void> {
  await db.updateTable('instances').set(patch).where('id', '=', id).execute();
}

/** Moves the status only from the one expected (a concurrent delete wins over a late step). */
export async function moveStatus(
  db: Kysely<ProvisionerDatabase>,
  id: string,
  from: InstanceStatus,
  to: InstanceStatus,
  patch: Updateable<InstancesTable> = {},
): Promise<boolean> {
  const res = await db
    .updateTable('instances')
    .set({ ...patch, status: to })
    .where('id', '=', id)
    .where('status', '=', from)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/**
 * Marks a partner's instance deleted in one conditional statement, from whatever status it has
 * when the statement runs: a lifecycle step moving it meanwhile (provisioning → ready) cannot
 * make the delete miss, as a read followed by an update from the status read could. False when
 * the partner has no such instance or it is deleted already.
 */
export async function softDeleteInstance(
  db: Kysely<ProvisionerDatabase>,
  partnerId: string,
  id: string,
  at: Date,
): Promise<boolean> {
  const res = await db
    .updateTable('instances')
    .set({ status: 'deleted', deleted_at: at })
    .where('id', '=', id)
    .where('partner_id', '=', partnerId)
    .where('status', '<>', 'deleted')
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/** The live instance already serving a number, other than `exceptId`. */
export async function liveInstanceForNumber(
  db: Kysely<ProvisionerDatabase>,
  number: { phone_number_id: string } | { channel_id: string },
  exceptId: string,
): Promise<InstanceRow | undefined> {
  return db
    .selectFrom('instances')
    .selectAll()
    .where((eb) =>
      'phone_number_id' in number
        ? eb('phone_number_id', '=', number.phone_number_id)
        : // Only an instance that holds its number (claimed it) counts: requests for one channel take
          // their turn under a lock (drive-lifecycle.ts), so an earlier one has claimed or failed.
          eb.and([eb('channel_id', '=', number.channel_id), eb('phone_number_id', 'is not', null)]),
    )
    .where('status', '<>', 'deleted')
    .where('id', '<>', exceptId)
    .executeTakeFirst();
}

/** Instances the runtime should be running (ready or on their way) and those it must stop. */
export async function instancesToResume(db: Kysely<ProvisionerDatabase>): Promise<InstanceRow[]> {
  return db
    .selectFrom('instances')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb('status', 'in', ['provisioning', 'ready']),
        eb.and([eb('status', '=', 'deleted'), eb('pid', 'is not', null)]),
        eb.and([
          eb('status', '=', 'failed'),
          eb('failure', 'is not', null),
          eb('errors_sent_at', 'is', null),
        ]),
        eb.and([eb('status', '=', 'failed'), eb('pid', 'is not', null)]),
      ]),
    )
    .execute();
}

export async function instanceBySubdomain(
  db: Kysely<ProvisionerDatabase>,
  subdomain: string,
): Promise<InstanceRow | undefined> {
  return db
    .selectFrom('instances')
    .selectAll()
    .where('subdomain', '=', subdomain)
    .where('status', '<>', 'deleted')
    .executeTakeFirst();
}

export { sql };
