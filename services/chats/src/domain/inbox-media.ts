import { MEDIA_MESSAGE_TYPES } from '@switchboard/proto';

/** Template parameters and interactive headers that carry media: an image, video or document. */
const TEMPLATE_MEDIA_TYPES = ['image', 'video', 'document'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The inbox media file a media object (`{id}` or `{link}`) names, if any: a `link` pointing at
 * this inbox's own `media/{id}/` (under its public URL), or an `id` that is an inbox media id (a
 * UUID; the network's own media ids are digits). Other links and ids are the network's business.
 */
export function inboxMediaIdOf(media: unknown, publicUrl: string | undefined): string | undefined {
  if (!isObject(media)) return undefined;
  const { id, link } = media;
  if (typeof id === 'string' && UUID.test(id)) return id.toLowerCase();
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
  // Built as the media service builds its links (`new URL('/api/v1/media/…', PUBLIC_URL)`).
  const prefix = new URL('/api/v1/media/', base).pathname;
  if (!url.pathname.startsWith(prefix)) return undefined;
  const rest = url.pathname.slice(prefix.length).replace(/\/$/, '');
  return UUID.test(rest) ? rest.toLowerCase() : undefined;
}

/** The media object named by the network's media id instead of the inbox file. */
function byNetworkId(media: Json, networkMediaId: string): Json {
  const { link: _link, id: _id, ...rest } = media;
  return { ...rest, id: networkMediaId };
}

/**
 * The message with every inbox media file it names (the media type's object, an interactive
 * message's header, or a template's media parameters) replaced by the network media id `resolve` answers; the message itself when
 * it names none. Files are resolved one after the other, in the message's order.
 */
export async function withNetworkMedia<M extends object>(
  message: M,
  publicUrl: string | undefined,
  resolve: (inboxMediaId: string) => Promise<string>,
): Promise<M> {
  const m = message as Json;
  const type = MEDIA_MESSAGE_TYPES.find((t) => t === m.type);
  if (type) {
    const mediaId = inboxMediaIdOf(m[type], publicUrl);
    if (!mediaId) return message;
    return { ...m, [type]: byNetworkId(m[type] as Json, await resolve(mediaId)) } as M;
  }
  const interactive = m.type === 'interactive' ? m.interactive : undefined;
  if (isObject(interactive) && isObject(interactive.header)) {
    const header = interactive.header;
    const kind = TEMPLATE_MEDIA_TYPES.find((t) => t === header.type);
    const mediaId = kind ? inboxMediaIdOf(header[kind], publicUrl) : undefined;
    if (!kind || !mediaId) return message;
    const replaced = { ...header, [kind]: byNetworkId(header[kind] as Json, await resolve(mediaId)) };
    return { ...m, interactive: { ...interactive, header: replaced } } as M;
  }
  const template = m.type === 'template' ? m.template : undefined;
  if (!isObject(template) || !Array.isArray(template.components)) return message;
  let changed = false;
  const components: unknown[] = [];
  for (const component of template.components) {
    if (!isObject(component) || !Array.isArray(component.parameters)) {
      components.push(component);
      continue;
    }
    const parameters: unknown[] = [];
    for (const parameter of component.parameters) {
      const kind = isObject(parameter) ? TEMPLATE_MEDIA_TYPES.find((t) => t === parameter.type) : undefined;
      const mediaId = kind && isObject(parameter) ? inboxMediaIdOf(parameter[kind], publicUrl) : undefined;
      if (kind && mediaId && isObject(parameter)) {
        parameters.push({
          ...parameter,
          [kind]: byNetworkId(parameter[kind] as Json, await resolve(mediaId)),
        });
        changed = true;
      } else {
        parameters.push(parameter);
      }
    }
    components.push({ ...component, parameters });
  }
  return changed ? ({ ...m, template: { ...template, components } } as M) : message;
}
