import { describe, expect, it } from 'vitest';
import { RESERVED_WEBHOOK_HEADERS } from './fanout.ts';
import { CreateInstanceRequestSchema, type ENV_VAR_OVERRIDE_ALLOWLIST } from './partner.ts';

describe('the Create Instance body', () => {
  it('takes the spec’s defaults', () => {
    expect(CreateInstanceRequestSchema.parse({ provider_api_key: 'k' })).toMatchObject({
      generate_activation: false,
      max_number_of_seats: 5,
    });
  });

  it.each(['', null, undefined])('a blank subdomain (%j) means “use the instance id”', (subdomain) => {
    expect(CreateInstanceRequestSchema.safeParse({ provider_api_key: 'k', subdomain }).success).toBe(true);
  });

  it.each(['a', 'acme', 'acme-2', 'x'.repeat(63), '0day'])('accepts the DNS label %s', (subdomain) => {
    expect(CreateInstanceRequestSchema.safeParse({ provider_api_key: 'k', subdomain }).success).toBe(true);
  });

  it.each(['-acme', 'acme-', 'ac_me', 'Acme', 'a.b', 'x'.repeat(64), 'ümlaut'])('refuses %s', (subdomain) => {
    const r = CreateInstanceRequestSchema.safeParse({ provider_api_key: 'k', subdomain });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(['subdomain']);
  });

  it('accepts every allowlisted override with a sensible value', () => {
    const values: Record<(typeof ENV_VAR_OVERRIDE_ALLOWLIST)[number], string> = {
      APP_IS_USER_AVAILABILITY_ENABLED: 'True',
      HIDE_API_LINKS: 'False',
      INBOX_FAVICON_URL: 'https://cdn.example.com/favicon.ico',
      INBOX_FRONTEND_URL: 'https://inbox.example.com',
      INBOX_SERVICE_NAME: 'Acme Inbox',
    };
    expect(
      CreateInstanceRequestSchema.safeParse({ provider_api_key: 'k', env_var_overrides: values }).success,
    ).toBe(true);
  });

  it('names every override it refuses', () => {
    const r = CreateInstanceRequestSchema.safeParse({
      channel_id: 'c',
      env_var_overrides: { PATH: '/tmp', NODE_OPTIONS: '--inspect', INBOX_FRONTEND_URL: 'not a url' },
    });
    expect(r.error?.issues.map((i) => i.path)).toEqual([
      ['env_var_overrides', 'PATH'],
      ['env_var_overrides', 'NODE_OPTIONS'],
      ['env_var_overrides', 'INBOX_FRONTEND_URL'],
    ]);
  });
});

describe('configurator.webhook_headers', () => {
  // Refused later by undici, these would fail the partner's events for good after the 202.
  const withHeaders = (webhook_headers: Record<string, string>) =>
    CreateInstanceRequestSchema.safeParse({
      provider_api_key: 'k',
      configurator: { user_name: 'c', webhook_url: 'https://partner.example/hook', webhook_headers },
    });

  it('accepts token names with values of visible ASCII, spaces and tabs between', () => {
    const r = withHeaders({
      Authorization: 'Bearer partner-side-secret',
      "X-Odd_Name.1!#$%&'*+^`|~": 'a value\twith tabs and spaces',
      'x-empty': '',
    });
    expect(r.success, JSON.stringify(r.error?.issues)).toBe(true);
  });

  it.each(['Bad Name', 'x:y', 'x/y', 'x(y)', 'x"y', 'caf\u00e9', 'x\ty'])(
    'refuses the name %j, at the name',
    (name) => {
      const r = withHeaders({ [name]: 'x' });
      expect(r.error?.issues.map((i) => i.path)).toEqual([['configurator', 'webhook_headers', name]]);
      expect(r.error?.issues[0]?.message).toMatch(/not a valid HTTP header name/);
    },
  );

  it.each([
    ['a\r\nInjected: yes', /line breaks/],
    ['a\nb', /line breaks/],
    ['a\rb', /line breaks/],
    ['nul\u0000', /control characters/],
    ['bell\u0007', /control characters/],
    ['del\u007f', /control characters/],
    ['caf\u00e9', /must be ASCII/],
    ['euro \u20ac', /must be ASCII/],
    [' padded', /start or end with spaces/],
  ])('refuses the value %j, at its name', (value, why) => {
    const r = withHeaders({ 'X-Partner': value });
    expect(r.error?.issues.map((i) => i.path)).toEqual([['configurator', 'webhook_headers', 'X-Partner']]);
    expect(r.error?.issues[0]?.message).toMatch(why);
  });

  it.each([
    ...RESERVED_WEBHOOK_HEADERS,
    'Expect',
    'UPGRADE',
    'Keep-Alive',
    'Transfer-Encoding',
    'Connection',
    'Content-Length',
    'Host',
    'Content-Type',
    'Webhook-Id',
    'Webhook-Timestamp',
    'Webhook-Signature',
  ])('refuses %s, in any case', (name) => {
    const r = withHeaders({ [name]: 'x' });
    expect(r.error?.issues.map((i) => i.path)).toEqual([['configurator', 'webhook_headers', name]]);
    expect(r.error?.issues[0]?.message).toMatch(/set by the delivery or the connection/);
  });

  it('names every header it refuses', () => {
    const r = withHeaders({ ok: 'fine', 'Bad Name': 'x', Expect: '100-continue', 'X-A': 'a\r\nb' });
    expect(r.error?.issues.map((i) => i.path)).toEqual([
      ['configurator', 'webhook_headers', 'Bad Name'],
      ['configurator', 'webhook_headers', 'Expect'],
      ['configurator', 'webhook_headers', 'X-A'],
    ]);
  });
});
