import type { NumberBehaviour } from '../config.ts';
import type { Fault } from '../domain/faults.ts';
import type { RateWindow } from '../domain/rate-limit.ts';
import type { MessageStatusValue, NetworkErrorItem, OutboundMessage, Template } from '../domain/wire.ts';

export interface StoredMedia {
  readonly id: string;
  readonly mimeType: string;
  readonly sha256: string;
  readonly data: Buffer;
  readonly filename: string | undefined;
  /** Who put it there: the business (upload), a customer (inbound) or a fetched `link`. */
  readonly origin: 'upload' | 'customer' | 'link';
  readonly createdAt: number;
}

export interface StatusEvent {
  readonly status: MessageStatusValue;
  readonly timestamp: number;
  readonly errors: NetworkErrorItem[] | undefined;
  readonly duplicate: boolean;
}

export interface FetchedLink {
  readonly link: string;
  readonly ok: boolean;
  readonly mimeType?: string;
  readonly size?: number;
  readonly sha256?: string;
  readonly error?: string;
}

/** A message the business sent and the network accepted. */
export interface SentMessage {
  readonly id: string;
  readonly waId: string;
  readonly message: OutboundMessage;
  readonly acceptedAt: number;
  /** Pricing category of the statuses: `service` for free-form, the template's category otherwise. */
  readonly category: string;
  readonly statuses: StatusEvent[];
  readonly links: FetchedLink[];
}

export interface CustomerMessageRecord {
  readonly id: string;
  readonly type: string;
  readonly timestamp: number;
  readonly deliveredToBusiness: boolean;
}

export interface Customer {
  readonly waId: string;
  profileName: string;
  undeliverable: boolean;
  neverReads: boolean;
  /** The customer blocked the business: messages are accepted, then fail as undeliverable. */
  blockedBusiness: boolean;
  lastMessageAt: number | undefined;
  windowExpiresAt: number | undefined;
  /** Wamids of business messages to this customer, oldest first. */
  readonly received: string[];
  readonly sent: CustomerMessageRecord[];
}

export interface DeliveryAttempt {
  readonly at: number;
  readonly url: string | undefined;
  readonly status: number | undefined;
  readonly error: string | undefined;
}

export interface WebhookDelivery {
  readonly id: string;
  readonly kind: 'messages' | 'statuses';
  /** Wamids the body is about. */
  readonly refs: readonly string[];
  readonly body: string;
  readonly createdAt: number;
  state: 'pending' | 'delivered' | 'gave_up';
  readonly attempts: DeliveryAttempt[];
}

/** One business phone number on the emulated network, with everything that happened on it. */
export interface BusinessNumber {
  readonly phoneNumberId: string;
  readonly displayPhoneNumber: string;
  readonly wabaId: string;
  apiKey: string;
  readonly webhookSecret: string;
  webhook: { url: string; headers: Record<string, string> } | undefined;
  behaviour: NumberBehaviour;
  clockOffsetMs: number;
  templates: Template[];
  readonly customers: Map<string, Customer>;
  readonly sent: Map<string, SentMessage>;
  readonly media: Map<string, StoredMedia>;
  readonly blockedUsers: Set<string>;
  readonly faults: Fault[];
  readonly deliveries: WebhookDelivery[];
  readonly rate: RateWindow;
}
