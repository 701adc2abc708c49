import { describe, expect, it } from 'vitest';
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
