import { describe, expect, it } from 'vitest';
import { hashSecret, newId, newSecret } from './credentials.ts';
import { errorsEvent } from './errors-events.ts';
import { instanceEnvironment } from './instance-env.ts';
import { IllegalTransitionError, nextStep, type Progress, transition } from './lifecycle.ts';

const fresh: Progress = {
  status: 'provisioning',
  keyResolved: false,
  numberClaimed: false,
  allocated: false,
  running: false,
  healthy: false,
  wantsToken: true,
  tokenSent: false,
  wantsMail: true,
  mailSent: false,
  errorsOwed: false,
};

describe('lifecycle transitions', () => {
  it.each([
    ['provisioning', 'healthy', 'ready'],
    ['provisioning', 'failed', 'failed'],
    ['provisioning', 'deleted', 'deleted'],
    ['ready', 'healthy', 'ready'],
    ['ready', 'deleted', 'deleted'],
    ['failed', 'deleted', 'deleted'],
    ['deleted', 'deleted', 'deleted'],
  ] as const)('%s + %s → %s', (from, event, to) => {
    expect(transition(from, { type: event })).toBe(to);
  });

  it.each([
    ['ready', 'failed'],
    ['failed', 'healthy'],
    ['deleted', 'healthy'],
    ['deleted', 'failed'],
  ] as const)('%s cannot take %s', (from, event) => {
    expect(() => transition(from, { type: event })).toThrow(IllegalTransitionError);
  });
});

describe('next step', () => {
  it('walks a creation in order, from what is recorded', () => {
    const order: string[] = [];
    const p = { ...fresh };
    const apply: Record<string, () => void> = {
      resolve_key: () => {
        p.keyResolved = true;
        p.numberClaimed = true;
      },
      claim_number: () => {
        p.numberClaimed = true;
      },
      allocate: () => {
        p.allocated = true;
      },
      start: () => {
        p.running = true;
      },
      await_health: () => {
        p.healthy = true;
        p.status = 'ready';
      },
      send_token: () => {
        p.tokenSent = true;
      },
      send_activation_mail: () => {
        p.mailSent = true;
      },
    };
    for (let step = nextStep(p); step; step = nextStep(p)) {
      order.push(step);
      apply[step]?.();
      expect(order.length).toBeLessThan(10);
    }
    expect(order).toEqual([
      'resolve_key',
      'allocate',
      'start',
      'await_health',
      'send_token',
      'send_activation_mail',
    ]);
  });

  it('restarts a ready instance that is not running, without waiting for health again', () => {
    const ready: Progress = {
      ...fresh,
      status: 'ready',
      keyResolved: true,
      numberClaimed: true,
      allocated: true,
      healthy: true,
      tokenSent: true,
      mailSent: true,
    };
    expect(nextStep(ready)).toBe('start');
    expect(nextStep({ ...ready, running: true })).toBeUndefined();
  });

  it('skips what was not asked for', () => {
    const p: Progress = {
      ...fresh,
      status: 'ready',
      keyResolved: true,
      numberClaimed: true,
      allocated: true,
      running: true,
      healthy: true,
      wantsToken: false,
      wantsMail: false,
    };
    expect(nextStep(p)).toBeUndefined();
  });

  it('a failed instance only owes stopping and its errors event; a deleted one only stopping', () => {
    expect(nextStep({ ...fresh, status: 'failed', errorsOwed: true })).toBe('send_errors');
    expect(nextStep({ ...fresh, status: 'failed' })).toBeUndefined();
    // Failed, and its process left running by a crash before it was stopped: stopped first.
    expect(nextStep({ ...fresh, status: 'failed', running: true, errorsOwed: true })).toBe('scale_to_zero');
    expect(nextStep({ ...fresh, status: 'failed', running: true })).toBe('scale_to_zero');
    expect(nextStep({ ...fresh, status: 'deleted', running: true })).toBe('scale_to_zero');
    expect(nextStep({ ...fresh, status: 'deleted' })).toBeUndefined();
  });
});

describe('errors event', () => {
  it('701 carries the channel id and the spec’s title', () => {
    expect(errorsEvent({ code: 701, parameters: { channel_id: '42' } })).toEqual({
      errors: [
        {
          code: 701,
          title: 'Number already deployed',
          details: expect.any(String),
          parameters: { channel_id: '42' },
        },
      ],
    });
  });
});

describe('credentials', () => {
  it('keeps only a hash, the same for the same secret and another for any other', () => {
    const key = newSecret('sbp_');
    expect(key).toMatch(/^sbp_[A-Za-z0-9_-]{43}$/);
    expect(hashSecret(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashSecret(key)).toBe(hashSecret(key));
    expect(hashSecret(`${key}x`)).not.toBe(hashSecret(key));
    expect(newSecret('sbp_')).not.toBe(key);
    expect(newId('in')).toMatch(/^in-[0-9a-f]{12}$/);
  });
});

describe('instance environment', () => {
  const input = {
    instanceId: 'in-000000000001',
    port: 4100,
    databaseUrl: 'postgres://u:p@127.0.0.1:5432/sb_instance_in_000000000001',
    natsUrl: 'nats://127.0.0.1:4222',
    natsStreamReplicas: 1,
    networkBaseUrl: 'http://127.0.0.1:8090',
    providerApiKey: 'key',
    displayPhoneNumber: '15550001234',
    secretKey: 's'.repeat(43),
    adminUsername: 'owner@example.com',
    adminEmail: 'owner@example.com',
    adminPassword: 'generated-password',
    seats: 7,
    publicUrl: 'http://127.0.0.1:4100',
    overrides: { INBOX_SERVICE_NAME: 'Acme', INSTANCE_ID: 'hijack' },
    extra: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', PORT: '1' },
  };

  it('overrides and extras never replace what makes the instance itself', () => {
    const env = instanceEnvironment(input);
    expect(env).toMatchObject({
      INSTANCE_ID: 'in-000000000001',
      PORT: '4100',
      MAX_NUMBER_OF_SEATS: '7',
      INBOX_SERVICE_NAME: 'Acme',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WABA_PHONE_NUMBER: '15550001234',
      INBOX_ADMIN_PASSWORD: 'generated-password',
    });
  });

  it('drops the admin password once the admin chose their own', () => {
    expect(instanceEnvironment({ ...input, adminPassword: '' })).not.toHaveProperty('INBOX_ADMIN_PASSWORD');
  });
});
