import { describe, expect, it } from 'vitest';
import { inboxMediaIdOf, withNetworkMedia } from './inbox-media.ts';

const PUBLIC = 'https://inbox.example.com';
const ID = '3f0b8f8e-4d2a-4c55-9a55-0c6c2b6f1f3e';
const LINK = `${PUBLIC}/api/v1/media/${ID}/`;

describe('inboxMediaIdOf', () => {
  it.each([
    [{ link: LINK }, ID],
    [{ link: `${PUBLIC}/api/v1/media/${ID}` }, ID],
    [{ id: ID.toUpperCase() }, ID],
    [{ link: `https://elsewhere.example.com/api/v1/media/${ID}/` }, undefined],
    [{ link: `${PUBLIC}/api/v1/media/not-an-id/` }, undefined],
    [{ link: `${PUBLIC}/api/v1/other/${ID}/` }, undefined],
    [{ id: '1234567890' }, undefined],
    ['text', undefined],
  ])('%j names %s', (media, expected) => {
    expect(inboxMediaIdOf(media, PUBLIC)).toBe(expected);
  });

  it('recognises the links the media service makes under a public URL with a path', () => {
    const made = new URL(`/api/v1/media/${ID}/`, `${PUBLIC}/inbox/`).toString();
    expect(inboxMediaIdOf({ link: made }, `${PUBLIC}/inbox/`)).toBe(ID);
  });

  it('needs the public URL to recognise a link', () => {
    expect(inboxMediaIdOf({ link: LINK }, undefined)).toBeUndefined();
  });
});

describe('withNetworkMedia', () => {
  const resolve = async (id: string) => `net-${id.slice(0, 4)}`;

  it('sends a media message by the network id, keeping everything else', async () => {
    const message = { to: '49', type: 'image', image: { link: LINK, caption: 'c' } };
    expect(await withNetworkMedia(message, PUBLIC, resolve)).toEqual({
      to: '49',
      type: 'image',
      image: { caption: 'c', id: 'net-3f0b' },
    });
  });

  it("replaces a template's media parameters and leaves the others", async () => {
    const message = {
      to: '49',
      type: 'template',
      template: {
        name: 'invoice',
        language: { code: 'en' },
        components: [
          { type: 'header', parameters: [{ type: 'document', document: { link: LINK, filename: 'a.pdf' } }] },
          { type: 'body', parameters: [{ type: 'text', text: 'hi' }] },
        ],
      },
    };
    const sent = await withNetworkMedia(message, PUBLIC, resolve);
    expect(sent.template.components[0]?.parameters[0]).toEqual({
      type: 'document',
      document: { filename: 'a.pdf', id: 'net-3f0b' },
    });
    expect(sent.template.components[1]).toEqual(message.template.components[1]);
  });

  it("replaces an interactive message's header media", async () => {
    const message = {
      type: 'interactive',
      interactive: { type: 'button', header: { type: 'video', video: { link: LINK } }, body: { text: 'b' } },
    };
    expect(await withNetworkMedia(message, PUBLIC, resolve)).toEqual({
      type: 'interactive',
      interactive: {
        type: 'button',
        header: { type: 'video', video: { id: 'net-3f0b' } },
        body: { text: 'b' },
      },
    });
  });

  it.each([
    [{ type: 'text', text: { body: LINK } }],
    [{ type: 'interactive', interactive: { type: 'button', header: { type: 'text', text: LINK } } }],
    [{ type: 'image', image: { link: 'https://cdn.example.com/a.png' } }],
    [{ type: 'template', template: { name: 't', language: { code: 'en' } } }],
  ])('leaves %j as it is, asking nothing', async (message) => {
    let asked = 0;
    const same = await withNetworkMedia(message, PUBLIC, async () => {
      asked++;
      return 'x';
    });
    expect(same).toBe(message);
    expect(asked).toBe(0);
  });
});
