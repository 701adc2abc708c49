import { describe, expect, it } from 'vitest';
import { createHeaderSigner } from './signed-header.ts';

const SECRET = 'a-test-instance-secret-0123456789abcdef';

describe('createHeaderSigner', () => {
  it('verifies what it signed and gives the payload back', () => {
    const signer = createHeaderSigner(SECRET, 'purpose-a');
    const payload = JSON.stringify({ user_id: 7, note: 'ünïcode' });
    expect(signer.verify(signer.sign(payload))).toBe(payload);
  });

  it('refuses a changed payload, another purpose, another secret and malformed values', () => {
    const signer = createHeaderSigner(SECRET, 'purpose-a');
    const signed = signer.sign('{"user_id":7}');
    const [body = '', mac = ''] = signed.split('.');
    const forged = `${Buffer.from('{"user_id":1}').toString('base64url')}.${mac}`;
    expect(signer.verify(forged)).toBeUndefined();
    expect(createHeaderSigner(SECRET, 'purpose-b').verify(signed)).toBeUndefined();
    expect(createHeaderSigner(`${SECRET}x`, 'purpose-a').verify(signed)).toBeUndefined();
    for (const bad of ['', '.', body, `${body}.`, `.${mac}`, `${body}.${mac}x`, 'a.b.c']) {
      expect(signer.verify(bad)).toBeUndefined();
    }
  });

  it('needs a strong secret and a purpose', () => {
    expect(() => createHeaderSigner('short', 'p')).toThrow();
    expect(() => createHeaderSigner(SECRET, '')).toThrow();
  });
});
