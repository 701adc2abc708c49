import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartnerHubClient, type PartnerHubClient } from '../src/domain/wire.ts';
import type { SandboxHandle } from '../src/index.ts';
import { call, networkFailureOf, seedOf, startFastSandbox } from './helpers.ts';

/** The provider's partner side through the typed client, as the provisioner uses it. */

let sb: SandboxHandle;
let hub: PartnerHubClient;

beforeAll(async () => {
  sb = await startFastSandbox();
  hub = createPartnerHubClient({
    hubUrl: `${sb.url}/api/v2`,
    networkUrl: sb.url,
    partnerId: 'partner-under-test',
    hubApiKey: 'hub-key',
    retries: 0,
  });
});

afterAll(async () => {
  await sb.close();
});

describe('partner hub', () => {
  it('names the number a key belongs to', async () => {
    const seed = seedOf(sb);
    expect(await hub.keyOwner(seed.apiKey)).toEqual({
      phoneNumberId: seed.phoneNumberId,
      displayPhoneNumber: seed.displayPhoneNumber,
    });
    expect((await networkFailureOf(hub.keyOwner('sbx_unknown'))).status).toBe(401);
  });

  it('a new key for a channel revokes the previous one at once', async () => {
    const created = await call(sb, 'POST', '/sandbox/numbers', {});
    const number = created.json as { phone_number_id: string; api_key: string };
    const first = await hub.createChannelApiKey(number.phone_number_id);
    expect(first.api_key).not.toBe(number.api_key);
    expect((await networkFailureOf(hub.keyOwner(number.api_key))).status).toBe(401);
    expect((await hub.keyOwner(first.api_key)).phoneNumberId).toBe(number.phone_number_id);
    const second = await hub.createChannelApiKey(number.phone_number_id);
    expect((await networkFailureOf(hub.keyOwner(first.api_key))).status).toBe(401);
    expect((await hub.keyOwner(second.api_key)).phoneNumberId).toBe(number.phone_number_id);
  });

  it('refuses an unknown channel (404) and a call without the hub key (401)', async () => {
    expect((await networkFailureOf(hub.createChannelApiKey('000000000000000'))).status).toBe(404);
    const res = await fetch(`${sb.url}/api/v2/partners/p/channels/${seedOf(sb).phoneNumberId}/api_keys`, {
      method: 'POST',
    });
    expect(res.status).toBe(401);
  });
});
