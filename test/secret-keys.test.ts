import { createContactProviderSecretsBox } from '@switchboard/chats';
import { createWebhookSecretsBox } from '@switchboard/fanout';
import { createTokenBox } from '@switchboard/gateway';
import { describe, expect, it } from 'vitest';

/** One instance secret (INBOX_SECRET_KEY), one key per service and purpose derived from it. */
describe('keys derived from the instance secret', () => {
  const key = 'k'.repeat(40);

  it('keeps the derivation of the gateway tokens sealed before the box moved to kit', () => {
    // Sealed by the gateway's own implementation before the move, key 'k' x 40.
    const sealed = Buffer.from(
      '2qSn4zAy5aLteBAK7e0sueWlX11fZgwBEylTp2LWrqSr8ZuyiTbyZen4pckbulnRGBuENNgTfGw/vQTw/BRRVtL8srA=',
      'base64',
    );
    expect(createTokenBox(key).open(sealed)).toBe('0123456789abcdef0123456789abcdef01234567');
    // The fan-out's key is another one: a token does not open as a webhook secret.
    expect(() => createWebhookSecretsBox(key).open(sealed)).toThrow();
    // Nor as a contact provider's secret (chats), and a provider secret opens only in its own box.
    expect(() => createContactProviderSecretsBox(key).open(sealed)).toThrow();
    const provider = createContactProviderSecretsBox(key).seal('whsec_provider');
    expect(createContactProviderSecretsBox(key).open(provider)).toBe('whsec_provider');
    expect(() => createWebhookSecretsBox(key).open(provider)).toThrow();
  });
});
