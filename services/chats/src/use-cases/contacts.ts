import {
  assertMayMessage,
  type blockContact as blockContract,
  canReadChat,
  type DirectoryContact,
  type getContact as getContract,
  isNetworkError,
  type listContacts as listContract,
  type Principal,
  ServiceError,
  type verifyContact as verifyContract,
} from '@switchboard/proto';
import type { Selectable } from 'kysely';
import { ProviderFailure, type ProviderQuestion } from '../adapters/http-contact-provider.ts';
import type { ChatsTable } from '../db.ts';
import { assertMayWrite } from '../domain/chat-access.ts';
import { type MergedContact, mergeContacts, type ProviderContact } from '../domain/contact-merge.ts';
import { initials } from '../domain/initials.ts';
import { chatAuditEntry, insertAuditEntry } from '../store/audit.ts';
import { findChat } from '../store/chats.ts';
import {
  type ContactProviderRow,
  enabledContactProviders,
  insertContactReport,
} from '../store/contact-providers.ts';
import { pageReadablePersons } from '../store/persons.ts';
import { contactOf, profileNames } from '../store/views.ts';
import type { OrganisationDeps } from './organisation-deps.ts';
import type { RequestOf } from './types.ts';

interface FailedProvider {
  id: number;
  name: string;
  error: string;
}

/**
 * Asks every enabled provider the same question at once, each within its own timeout, through
 * the short-lived cache. A provider that fails, is slow or answers outside the protocol is left
 * out and named; it never fails the request.
 */
async function askProviders(
  deps: OrganisationDeps,
  question: ProviderQuestion,
): Promise<{ answers: Array<{ provider: string; contacts: ProviderContact[] }>; failed: FailedProvider[] }> {
  const providers = await enabledContactProviders(deps.db);
  const outcomes = await Promise.all(
    providers.map(async (p: ContactProviderRow) => {
      try {
        const secret = deps.providerSecrets?.open(p.secret_sealed);
        if (secret === undefined)
          throw new ProviderFailure('its secret cannot be opened (no INBOX_SECRET_KEY)');
        // The key changes with the provider, so an edit is never answered from an older entry.
        const key = `${p.id}:${p.updated_at.getTime()}:${JSON.stringify(question)}`;
        const contacts = await deps.contactCache.get(key, () =>
          deps.providers.ask({ id: p.id, url: p.url, secret, timeoutMs: p.timeout_ms }, question),
        );
        return { ok: true as const, provider: p.name, contacts };
      } catch (err) {
        const error = err instanceof ProviderFailure ? err.message : 'failed';
        if (!(err instanceof ProviderFailure))
          deps.log.warn({ err, provider: p.id }, 'contact provider failed');
        return { ok: false as const, failed: { id: p.id, name: p.name, error } };
      }
    }),
  );
  return {
    answers: outcomes.flatMap((o) => (o.ok ? [{ provider: o.provider, contacts: o.contacts }] : [])),
    failed: outcomes.flatMap((o) => (o.ok ? [] : [o.failed])),
  };
}

/** The API contact: the chat's facts where the caller may read the chat, the provider's name and extra. */
function directoryContact(
  m: MergedContact,
  chat: Selectable<ChatsTable> | undefined,
  profileName: string | undefined,
): DirectoryContact {
  const networkName = profileName ?? m.name;
  const base = chat
    ? contactOf(chat, networkName)
    : {
        wa_id: m.wa_id,
        waba_payload: { profile: { name: networkName }, wa_id: m.wa_id },
        initials: initials(networkName, m.wa_id),
        last_message_timestamp: null,
        resolved: false,
        messaging_window_expires_at: null,
      };
  return {
    ...base,
    initials: initials(m.name || networkName, m.wa_id),
    name: m.name,
    provider: m.provider,
    extra: m.extra,
  };
}

async function readableChats(deps: OrganisationDeps, p: Principal, waIds: string[]) {
  if (!waIds.length) return new Map<string, Selectable<ChatsTable>>();
  const rows = await deps.db.selectFrom('chats').selectAll().where('wa_id', 'in', waIds).execute();
  return new Map(rows.filter((c) => canReadChat(p, c)).map((c) => [c.wa_id, c]));
}

/** Contacts matching `search`, merged from the providers and the customers who wrote, by name. */
export async function listContacts(deps: OrganisationDeps, r: RequestOf<typeof listContract>) {
  const p = r.principal;
  assertMayMessage(p);
  // Each provider is read up to the end of the asked page (at most 500); merging needs no more.
  const window = Math.min(r.offset + r.limit, 500);
  const [{ answers, failed }, persons] = await Promise.all([
    askProviders(deps, { type: 'search', query: r.search ?? '', limit: window }),
    // The customers who wrote are local: read them to the end of the page however far it is.
    pageReadablePersons(deps.db, p, { search: r.search, limit: r.offset + r.limit, offset: 0, byName: true }),
  ]);
  const merged = mergeContacts(answers, persons.rows);
  const pageItems = merged.slice(r.offset, r.offset + r.limit);
  const waIds = pageItems.map((m) => m.wa_id);
  const chats = await readableChats(deps, p, waIds);
  const names = await profileNames(deps.db, [...chats.keys()]);
  return {
    // Merged sources are read up to this page only; the customers who wrote are counted whole,
    // so `next` is offered while any remain.
    count: Math.max(merged.length, persons.count),
    results: pageItems.map((m) => directoryContact(m, chats.get(m.wa_id), names.get(m.wa_id) || undefined)),
    failed_providers: failed,
  };
}

/** One contact: what the providers know of the number, else the customer as the network named them. */
export async function getContact(deps: OrganisationDeps, r: RequestOf<typeof getContract>) {
  const p = r.principal;
  assertMayMessage(p);
  const [{ answers, failed }, chats] = await Promise.all([
    askProviders(deps, { type: 'lookup', wa_id: r.wa_id }),
    readableChats(deps, p, [r.wa_id]),
  ]);
  const names = await profileNames(deps.db, [...chats.keys()]);
  const persons = chats.has(r.wa_id) ? [{ wa_id: r.wa_id, profile_name: names.get(r.wa_id) ?? '' }] : [];
  const merged = mergeContacts(
    answers.map((a) => ({ ...a, contacts: a.contacts.filter((c) => c.wa_id === r.wa_id) })),
    persons,
  )[0];
  if (!merged) throw new ServiceError('not_found', 'No contact with this wa_id.');
  return {
    ...directoryContact(merged, chats.get(r.wa_id), names.get(r.wa_id) || undefined),
    failed_providers: failed,
  };
}

/** Contact actions act on the customer's chat: they need write permission on it. */
async function assertMayAct(deps: OrganisationDeps, p: Principal, waId: string): Promise<void> {
  assertMayMessage(p);
  assertMayWrite(p, waId, await findChat(deps.db, waId));
}

function networkFailure(err: unknown): never {
  if (isNetworkError(err) && !err.retryable) {
    throw new ServiceError('block_refused', `The network refused: ${err.details ?? err.message}`);
  }
  throw new ServiceError('service_unavailable', 'The network did not answer.', {
    details: { dependency: 'network' },
    cause: err,
  });
}

/** Asks the network whether the number has a WhatsApp account (`unknown` where it cannot say). */
export async function verifyContact(deps: OrganisationDeps, r: RequestOf<typeof verifyContract>) {
  await assertMayAct(deps, r.principal, r.wa_id);
  const status = await deps.contactCheck.check(r.wa_id).catch((err: unknown) => {
    if (isNetworkError(err) && !err.retryable) return 'unknown' as const;
    throw new ServiceError('service_unavailable', 'The network did not answer.', {
      details: { dependency: 'network' },
      cause: err,
    });
  });
  await insertAuditEntry(deps.db, chatAuditEntry(r.principal, 'contact.verified', r.wa_id, { status }));
  return { wa_id: r.wa_id, status };
}

/** Blocks or unblocks at the network; a report blocks and records why. */
export async function blockContact(deps: OrganisationDeps, r: RequestOf<typeof blockContract>) {
  const p = r.principal;
  await assertMayAct(deps, p, r.wa_id);
  const answer = await (r.blocked
    ? deps.network.blockUsers([r.wa_id])
    : deps.network.unblockUsers([r.wa_id])
  ).catch(networkFailure);
  const failed = answer.block_users.failed_users?.[0];
  if (failed) {
    const why = failed.errors?.[0];
    throw new ServiceError(
      'block_refused',
      `The network refused: ${why?.message ?? why?.title ?? 'no reason given'}`,
    );
  }
  const reported = r.report_reason !== undefined;
  await deps.db.transaction().execute(async (trx) => {
    if (r.report_reason !== undefined) {
      await insertContactReport(trx, { wa_id: r.wa_id, reason: r.report_reason, user_id: p.user_id });
      await insertAuditEntry(
        trx,
        chatAuditEntry(p, 'contact.reported', r.wa_id, { reason: r.report_reason }),
      );
    }
    await insertAuditEntry(
      trx,
      chatAuditEntry(p, r.blocked ? 'contact.blocked' : 'contact.unblocked', r.wa_id, {}),
    );
  });
  return { wa_id: r.wa_id, blocked: r.blocked, reported };
}
