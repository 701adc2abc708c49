import { inboundMessageBody } from '../domain/bodies.ts';
import { failures } from '../domain/failure.ts';
import {
  sampleButton,
  sampleButtonReply,
  sampleContacts,
  sampleEmoji,
  sampleListReply,
  sampleLocation,
  sampleOrder,
  sampleReferral,
  sampleText,
  sampleUnsupportedType,
  unknownErrors,
  unsupportedErrors,
} from '../domain/fixtures/inbound.ts';
import { type MediaFixture, mediaFixtures } from '../domain/fixtures/media.ts';
import { newWamid } from '../domain/ids.ts';
import { windowAfterCustomerMessage } from '../domain/window.ts';
import { type InboundMessage, InboundMessageSchema } from '../domain/wire.ts';
import type { CustomerMessageRequest, CustomerMessageResponse } from '../routes/control/schemas.ts';
import { putMedia } from '../store/media-store.ts';
import type { BusinessNumber, Customer } from '../store/model.ts';
import { ensureCustomer, numberNowMs, numberNowSeconds, type SandboxState } from '../store/store.ts';
import type { WebhookDispatcher } from './webhooks.ts';

type MediaRequest = { mime_type?: string | undefined; data_base64?: string | undefined } | undefined;

function mediaIdOf(message: InboundMessage): string | undefined {
  switch (message.type) {
    case 'image':
      return message.image.id;
    case 'audio':
      return message.audio.id;
    case 'video':
      return message.video.id;
    case 'document':
      return message.document.id;
    case 'sticker':
      return message.sticker.id;
    default:
      return undefined;
  }
}

export interface InboundEngine {
  /** A customer sends a message: the number's window moves and the network posts the webhook. */
  receive(number: BusinessNumber, waId: string, request: CustomerMessageRequest): CustomerMessageResponse;
}

export function createInboundEngine(deps: {
  state: SandboxState;
  dispatcher: WebhookDispatcher;
}): InboundEngine {
  function media(number: BusinessNumber, given: MediaRequest, fixture: MediaFixture, filename?: string) {
    const stored = putMedia(
      number,
      {
        data: given?.data_base64 ? Buffer.from(given.data_base64, 'base64') : fixture.data,
        mimeType: given?.mime_type ?? fixture.mimeType,
        filename: filename ?? fixture.filename,
        origin: 'customer',
      },
      numberNowMs(deps.state, number),
    );
    return { mime_type: stored.mimeType, sha256: stored.sha256, id: stored.id };
  }

  /** The business message a reply or reaction points at by default: the latest one to this customer. */
  function latestBusinessMessage(customer: Customer): string {
    return customer.received.at(-1) ?? newWamid(customer.waId);
  }

  function content(
    number: BusinessNumber,
    customer: Customer,
    req: CustomerMessageRequest,
  ): Record<string, unknown> {
    switch (req.type) {
      case 'text':
        return { text: req.text ?? sampleText };
      case 'image':
        return {
          image: {
            ...(req.image?.caption ? { caption: req.image.caption } : { caption: 'Here is the photo' }),
            ...media(number, req.image, mediaFixtures.image),
          },
        };
      case 'audio':
        return {
          audio: { ...media(number, req.audio, mediaFixtures.audio), voice: req.audio?.voice ?? true },
        };
      case 'video':
        return {
          video: {
            ...(req.video?.caption ? { caption: req.video.caption } : {}),
            ...media(number, req.video, mediaFixtures.video),
          },
        };
      case 'document': {
        const filename = req.document?.filename ?? mediaFixtures.document.filename;
        return {
          document: {
            caption: req.document?.caption ?? 'The invoice',
            filename,
            ...media(number, req.document, mediaFixtures.document, filename),
          },
        };
      }
      case 'sticker':
        return {
          sticker: {
            ...media(number, req.sticker, mediaFixtures.sticker),
            animated: req.sticker?.animated ?? false,
          },
        };
      case 'location':
        return { location: req.location ?? sampleLocation };
      case 'contacts':
        return { contacts: req.contacts ?? sampleContacts };
      case 'interactive':
        return {
          context: { from: number.displayPhoneNumber, id: latestBusinessMessage(customer) },
          interactive:
            req.interactive?.type === 'list_reply'
              ? { type: 'list_reply', list_reply: req.interactive.list_reply ?? sampleListReply }
              : { type: 'button_reply', button_reply: req.interactive?.button_reply ?? sampleButtonReply },
        };
      case 'button':
        return {
          context: { from: number.displayPhoneNumber, id: latestBusinessMessage(customer) },
          button: req.button ?? sampleButton,
        };
      case 'reaction':
        return {
          reaction: {
            message_id: req.reaction?.message_id ?? latestBusinessMessage(customer),
            emoji: req.reaction?.emoji ?? sampleEmoji,
          },
        };
      case 'order':
        return { order: req.order ?? sampleOrder };
      case 'system': {
        // Without a given new number, the last digit changes: a plausible, different wa_id.
        const newWaId =
          req.system?.new_wa_id ?? `${customer.waId.slice(0, -1)}${(Number(customer.waId.at(-1)) + 1) % 10}`;
        return {
          system: {
            body: `User ${customer.profileName} changed from ${customer.waId} to ${newWaId}`,
            wa_id: newWaId,
            type: 'user_changed_number',
          },
        };
      }
      case 'unsupported':
        return {
          errors: unsupportedErrors,
          unsupported: { type: req.unsupported?.type ?? sampleUnsupportedType },
        };
      case 'unknown':
        return { errors: unknownErrors };
    }
  }

  function contextOf(number: BusinessNumber, req: CustomerMessageRequest): Record<string, unknown> {
    if (!req.context) return {};
    const { id, forwarded, frequently_forwarded } = req.context;
    return {
      context: {
        ...(id ? { from: number.displayPhoneNumber, id } : {}),
        ...(forwarded === undefined ? {} : { forwarded }),
        ...(frequently_forwarded === undefined ? {} : { frequently_forwarded }),
      },
    };
  }

  return {
    receive(number, waId, req) {
      const customer = ensureCustomer(number, waId);
      if (req.profile_name) customer.profileName = req.profile_name;
      const now = numberNowSeconds(deps.state, number);
      const sentAt = req.timestamp === undefined ? now : Number(req.timestamp);
      const referral = req.referral ? { referral: { ...sampleReferral, ...req.referral } } : {};
      const built = content(number, customer, req);
      const candidate = {
        ...contextOf(number, req),
        from: waId,
        id: newWamid(waId),
        timestamp: String(sentAt),
        type: req.type,
        ...referral,
        ...built,
      };
      const parsed = InboundMessageSchema.safeParse(candidate);
      if (!parsed.success) {
        throw failures.invalidValue(
          `The message does not form a valid ${req.type} message: ${parsed.error.message}`,
        );
      }
      const message = parsed.data;

      // A number change is not the customer writing: it leaves the window as it is.
      if (req.type !== 'system') {
        customer.windowExpiresAt = windowAfterCustomerMessage(
          customer.windowExpiresAt,
          sentAt,
          req.referral !== undefined,
        );
        customer.lastMessageAt = Math.max(customer.lastMessageAt ?? 0, sentAt);
      }
      const deliveredToBusiness = !number.blockedUsers.has(waId);
      customer.sent.push({ id: message.id, type: message.type, timestamp: sentAt, deliveredToBusiness });
      if (deliveredToBusiness) {
        deps.dispatcher.post(number, 'messages', [message.id], inboundMessageBody(number, customer, message));
      }
      const mediaId = mediaIdOf(message);
      return {
        id: message.id,
        timestamp: message.timestamp,
        ...(mediaId === undefined ? {} : { media_id: mediaId }),
        window_expires_at: customer.windowExpiresAt ?? null,
        delivered_to_business: deliveredToBusiness,
      };
    },
  };
}
