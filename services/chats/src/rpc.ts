import type { Logger, Subscription } from '@switchboard/kit';
import {
  assignChat,
  auditList,
  getChat,
  getMessage,
  importChat,
  listChats,
  listInboundDeadLetters,
  listMessages,
  listPersons,
  listTemplates,
  listWhatsappAccounts,
  markAsReceived,
  redriveInboundDeadLetter,
  sendMessage,
  setMessageMedia,
  updateChat,
} from '@switchboard/proto';
import type { Bus } from '@switchboard/proto/bus';
import type { NetworkClient } from '@switchboard/proto/network';
import type { Kysely } from 'kysely';
import type { ChatsDatabase } from './db.ts';
import * as useCase from './use-cases/index.ts';
import { setMessageMedia as setMessageMediaUseCase } from './use-cases/set-message-media.ts';

export interface RpcDeps {
  db: Kysely<ChatsDatabase>;
  bus: Bus;
  log: Logger;
  network: NetworkClient;
  account: useCase.WhatsappAccount;
  templateCacheSeconds: number;
}

/**
 * Serves the requests (messaging, the event log, inbound dead letters): each contract maps to its use case (`use-cases/`), in the
 * `chats` queue group so each request is answered once, by whichever worker is free.
 */
export function startRpc(rpcDeps: RpcDeps): Subscription[] {
  const { bus } = rpcDeps;
  const templates: useCase.TemplateCache = {};
  const deps = { ...rpcDeps, templates, acceptor: useCase.createSendAcceptor(rpcDeps.db) };
  const queue = { queue: 'chats' };
  return [
    bus.serve(sendMessage, (r) => useCase.sendMessage(deps, r), queue),
    bus.serve(listMessages, (r) => useCase.listMessages(deps, r), queue),
    bus.serve(getMessage, (r) => useCase.getMessage(deps, r), queue),
    bus.serve(importChat, (r) => useCase.importChat(deps, r), queue),
    bus.serve(listChats, (r) => useCase.listChats(deps, r), queue),
    bus.serve(getChat, (r) => useCase.getChat(deps, r), queue),
    bus.serve(updateChat, (r) => useCase.updateChat(deps, r), queue),
    bus.serve(assignChat, (r) => useCase.assignChat(deps, r), queue),
    bus.serve(markAsReceived, (r) => useCase.markAsReceived(deps, r), queue),
    bus.serve(listPersons, (r) => useCase.listPersons(deps, r), queue),
    bus.serve(listTemplates, (r) => useCase.listTemplates(deps, r), queue),
    bus.serve(listWhatsappAccounts, (r) => useCase.listWhatsappAccounts(deps, r), queue),
    bus.serve(auditList, (r) => useCase.listAuditLog(deps, r), queue),
    bus.serve(listInboundDeadLetters, (r) => useCase.listInboundDeadLetters(deps, r), queue),
    bus.serve(redriveInboundDeadLetter, (r) => useCase.redriveInboundDeadLetter(deps, r), queue),
    bus.serve(setMessageMedia, (r) => setMessageMediaUseCase(deps, r), queue),
  ];
}
