// The messaging use cases, one module each; `rpc.ts` maps each request contract to one.
export { assignChat } from './assign-chat.ts';
export { getChat } from './get-chat.ts';
export { getMessage } from './get-message.ts';
export { type ImportDeps, importChat } from './import-chat.ts';
export {
  type DeadLetterDeps,
  listInboundDeadLetters,
  redriveInboundDeadLetter,
} from './inbound-dead-letters.ts';
export { listAuditLog } from './list-audit-log.ts';
export { listChats } from './list-chats.ts';
export { listMessages } from './list-messages.ts';
export { listPersons } from './list-persons.ts';
export { listTemplates, type TemplateCache } from './list-templates.ts';
export { listWhatsappAccounts, type WhatsappAccount } from './list-whatsapp-accounts.ts';
export { markAsReceived } from './mark-as-received.ts';
export { createSendAcceptor, type SendDeps, sendMessage } from './send-message.ts';
export { updateChat } from './update-chat.ts';
