import { describe, expect, it } from 'vitest';
import { inboxMediaOf, withNetworkMediaId } from './inbox-media.ts';

const PUBLIC = 'https://inbox.example.com';
const ID = '3f0b8f8e-4d2a-4c55-9a55-0c6c2b6f1f3e';

describe('inboxMediaOf', () => {
  it.each([
    [
      { type: 'image', image: { link: `${PUBLIC}/api/v1/media/${ID}/` } },
      { type: 'image', mediaId: ID },
    ],
    [
      { type: 'audio', audio: { link: `${PUBLIC}/api/v1/media/${ID}` } },
      { type: 'audio', mediaId: ID },
    ],
    [
      { type: 'document', document: { id: ID.toUpperCase() } },
      { type: 'document', mediaId: ID },
    ],
  ])('finds the inbox file of %j', (message, expected) => {
    expect(inboxMediaOf(message, PUBLIC)).toEqual(expected);
  });

  it.each([
    [{ type: 'image', image: { link: `https://elsewhere.example.com/api/v1/media/${ID}/` } }],
    [{ type: 'image', image: { link: `${PUBLIC}/api/v1/media/not-an-id/` } }],
    [{ type: 'image', image: { link: `${PUBLIC}/api/v1/other/${ID}/` } }],
    [{ type: 'image', image: { id: '1234567890' } }],
    [{ type: 'text', text: { body: `${PUBLIC}/api/v1/media/${ID}/` } }],
  ])('leaves %j to the network', (message) => {
    expect(inboxMediaOf(message, PUBLIC)).toBeUndefined();
  });

  it('needs the public URL to recognise a link', () => {
    expect(
      inboxMediaOf({ type: 'image', image: { link: `${PUBLIC}/api/v1/media/${ID}/` } }, undefined),
    ).toBeUndefined();
  });

  it('sends by the network id, keeping everything else', () => {
    const message = {
      to: '49',
      type: 'image',
      image: { link: `${PUBLIC}/api/v1/media/${ID}/`, caption: 'c' },
    };
    expect(withNetworkMediaId(message, { type: 'image', mediaId: ID }, '777')).toEqual({
      to: '49',
      type: 'image',
      image: { caption: 'c', id: '777' },
    });
  });
});
