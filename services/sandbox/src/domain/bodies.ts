import {
  type InboundMessage,
  type MessageStatus,
  type MessageStatusValue,
  type MessagesWebhookBody,
  messagesWebhookBody,
  type NetworkErrorItem,
  type WebhookNumber,
} from './wire.ts';

export type NumberIdentity = WebhookNumber;

const envelope = messagesWebhookBody;

/**
 * The webhook for one customer message. System messages (a number change) carry no
 * `contacts` array, as on the real network.
 */
export function inboundMessageBody(
  number: NumberIdentity,
  contact: { profileName: string; waId: string },
  message: InboundMessage,
): MessagesWebhookBody {
  const contacts =
    message.type === 'system'
      ? {}
      : { contacts: [{ profile: { name: contact.profileName }, wa_id: contact.waId }] };
  return envelope(number, { ...contacts, messages: [message] });
}

export interface StatusSubject {
  readonly id: string;
  readonly waId: string;
  /** `service` for free-form messages, the template's category otherwise. */
  readonly category: string;
  readonly bizOpaqueCallbackData: string | undefined;
}

export function statusObject(
  subject: StatusSubject,
  status: MessageStatusValue,
  timestamp: number,
  errors?: NetworkErrorItem[],
): MessageStatus {
  const service = subject.category === 'service';
  // Pricing rides on the sent/delivered/read statuses only (per-message pricing, v24+: no `conversation`).
  const priced = status === 'sent' || status === 'delivered' || status === 'read';
  return {
    id: subject.id,
    status,
    timestamp: String(timestamp),
    recipient_id: subject.waId,
    ...(subject.bizOpaqueCallbackData === undefined
      ? {}
      : { biz_opaque_callback_data: subject.bizOpaqueCallbackData }),
    ...(priced
      ? {
          pricing: {
            billable: !service,
            pricing_model: 'PMP',
            type: service ? 'free_customer_service' : 'regular',
            category: subject.category,
          },
        }
      : {}),
    ...(errors ? { errors } : {}),
  };
}

export function statusBody(number: NumberIdentity, status: MessageStatus): MessagesWebhookBody {
  return envelope(number, { statuses: [status] });
}
