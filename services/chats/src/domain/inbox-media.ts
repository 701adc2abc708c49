const MEDIA_TYPES = ['image', 'audio', 'video', 'document', 'sticker'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where a message names one of this inbox's own media files. */
export interface InboxMediaRef {
  /** The message's type: the key of the media object. */
  readonly type: (typeof MEDIA_TYPES)[number];
  readonly mediaId: string;
}

/**
 * The inbox media file a send names, if any: `<type>.link` pointing at this inbox's own
 * `media/{id}/` (under its public URL), or `<type>.id` that is an inbox media id (a UUID; the
 * network's own media ids are digits). Other links and ids are the network's business.
 */
export function inboxMediaOf(
  message: Record<string, unknown>,
  publicUrl: string | undefined,
): InboxMediaRef | undefined {
  const type = MEDIA_TYPES.find((t) => t === message.type);
  if (!type) return undefined;
  const media = message[type];
  if (media === null || typeof media !== 'object') return undefined;
  const { id, link } = media as { id?: unknown; link?: unknown };
  if (typeof id === 'string' && UUID.test(id)) return { type, mediaId: id.toLowerCase() };
  if (typeof link !== 'string' || !publicUrl) return undefined;
  let url: URL;
  let base: URL;
  try {
    url = new URL(link);
    base = new URL(publicUrl);
  } catch {
    return undefined;
  }
  if (url.origin !== base.origin) return undefined;
  const prefix = `${base.pathname.replace(/\/+$/, '')}/api/v1/media/`;
  if (!url.pathname.startsWith(prefix)) return undefined;
  const rest = url.pathname.slice(prefix.length).replace(/\/$/, '');
  return UUID.test(rest) ? { type, mediaId: rest.toLowerCase() } : undefined;
}

/** The message with its media object naming the network's media id instead of the inbox file. */
export function withNetworkMediaId<M extends Record<string, unknown>>(
  message: M,
  ref: InboxMediaRef,
  networkMediaId: string,
): M {
  const { link: _link, id: _id, ...rest } = message[ref.type] as Record<string, unknown>;
  return { ...message, [ref.type]: { ...rest, id: networkMediaId } };
}
