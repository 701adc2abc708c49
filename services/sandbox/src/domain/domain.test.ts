import { describe, expect, it } from 'vitest';
import { NetworkFailure } from './failure.ts';
import { type Fault, takeFault } from './faults.ts';
import { defaultTemplates } from './fixtures/templates.ts';
import { checkOutbound } from './outbound-checks.ts';
import { secondsUntilNextWindow, takeRateSlot } from './rate-limit.ts';
import { planStatuses } from './status-plan.ts';
import { failureFromIssues } from './validation.ts';
import {
  AD_REFERRAL_WINDOW_SECONDS,
  isWindowOpen,
  WINDOW_SECONDS,
  windowAfterCustomerMessage,
} from './window.ts';

describe('customer service window', () => {
  const now = 1_700_000_000;

  it('opens for 24 hours, 72 from an ad, and never shrinks', () => {
    expect(windowAfterCustomerMessage(undefined, now, false)).toBe(now + WINDOW_SECONDS);
    expect(windowAfterCustomerMessage(undefined, now, true)).toBe(now + AD_REFERRAL_WINDOW_SECONDS);
    const open = now + WINDOW_SECONDS;
    // A late delivery of an older message keeps the newer window.
    expect(windowAfterCustomerMessage(open, now - 3600, false)).toBe(open);
    // A referral inside an open window does not stretch it to 72 hours.
    expect(windowAfterCustomerMessage(open, now + 60, true)).toBe(now + 60 + WINDOW_SECONDS);
    expect(isWindowOpen(open, open - 1)).toBe(true);
    expect(isWindowOpen(open, open)).toBe(false);
    expect(isWindowOpen(undefined, now)).toBe(false);
  });
});

describe('status plans', () => {
  const delaysMs = { sent: 10, delivered: 20, read: 30 };
  const never = () => 0.99;
  const always = () => 0;

  it('goes sent, delivered, read in time order', () => {
    const plan = planStatuses(
      { delaysMs, readWithoutDeliveredRate: 0, duplicateStatusRate: 0, neverReads: false },
      never,
    );
    expect(plan.map((p) => [p.status, p.delayMs])).toEqual([
      ['sent', 10],
      ['delivered', 30],
      ['read', 60],
    ]);
  });

  it('skips delivered when the customer reads at once, and never reads for non-readers', () => {
    const fast = planStatuses(
      { delaysMs, readWithoutDeliveredRate: 1, duplicateStatusRate: 0, neverReads: false },
      always,
    );
    expect(fast.map((p) => p.status)).toEqual(['sent', 'read']);
    const silent = planStatuses(
      { delaysMs, readWithoutDeliveredRate: 1, duplicateStatusRate: 0, neverReads: true },
      always,
    );
    expect(silent.map((p) => p.status)).toEqual(['sent', 'delivered']);
  });

  it('duplicates statuses when asked', () => {
    const plan = planStatuses(
      { delaysMs, readWithoutDeliveredRate: 0, duplicateStatusRate: 1, neverReads: false },
      () => 0.5,
    );
    expect(plan.filter((p) => p.duplicate).map((p) => p.status)).toEqual(['sent', 'delivered', 'read']);
  });
});

describe('outbound checks', () => {
  const base = {
    waId: '4915112345678',
    nowSeconds: 1_700_000_000,
    blockedByBusiness: false,
    templates: defaultTemplates(),
    mediaExists: () => true,
  };
  const text = {
    messaging_product: 'whatsapp' as const,
    to: '4915112345678',
    type: 'text' as const,
    text: { body: 'x' },
  };

  function code(fn: () => unknown): number | undefined {
    try {
      fn();
      return undefined;
    } catch (err) {
      return err instanceof NetworkFailure ? err.code : -1;
    }
  }

  it('needs an open window for free-form only', () => {
    expect(code(() => checkOutbound({ ...base, message: text, windowExpiresAt: undefined }))).toBe(131047);
    expect(
      code(() => checkOutbound({ ...base, message: text, windowExpiresAt: base.nowSeconds + 1 })),
    ).toBeUndefined();
    const template = {
      messaging_product: 'whatsapp' as const,
      to: '4915112345678',
      type: 'template' as const,
      template: { name: 'hello_world', language: { code: 'en_US' } },
    };
    expect(checkOutbound({ ...base, message: template, windowExpiresAt: undefined })).toMatchObject({
      category: 'utility',
    });
  });

  it('refuses recipients the business blocked, before anything else', () => {
    expect(
      code(() =>
        checkOutbound({ ...base, blockedByBusiness: true, message: text, windowExpiresAt: undefined }),
      ),
    ).toBe(130403);
  });
});

describe('rate limit', () => {
  it('allows the limit per second, then asks to wait for the next second', () => {
    const w = { windowStartMs: 0, count: 0 };
    expect([1, 2, 3].map(() => takeRateSlot(w, 2, 10_000))).toEqual([true, true, false]);
    expect(secondsUntilNextWindow(w, 10_400)).toBe(1);
    expect(takeRateSlot(w, 2, 11_000)).toBe(true);
    expect(takeRateSlot(w, 0, 11_000)).toBe(true);
  });
});

describe('validation errors', () => {
  it('maps schema issues to the network’s codes', () => {
    expect(
      failureFromIssues([{ code: 'unrecognized_keys', path: ['text'], message: '', keys: ['x'] }]).code,
    ).toBe(100);
    expect(
      failureFromIssues([{ code: 'invalid_value', path: ['messaging_product'], message: '', missing: true }])
        .code,
    ).toBe(131008);
    expect(
      failureFromIssues([{ code: 'too_big', path: ['text', 'body'], message: 'Too big' }]),
    ).toMatchObject({
      code: 131009,
      details: 'Param text.body: Too big',
    });
  });
});

describe('injected faults', () => {
  it('keeps a download-only fault for downloads, taking unscoped ones for any call', () => {
    const queue: Fault[] = [
      { status: 503, retryAfterSeconds: undefined, only: 'media_download', remaining: 2 },
      { status: 500, retryAfterSeconds: undefined, remaining: 1 },
    ];
    expect(takeFault(queue)?.status).toBe(500);
    expect(takeFault(queue)).toBeUndefined();
    expect(takeFault(queue, 'media_download')?.status).toBe(503);
    expect(takeFault(queue, 'media_download')?.status).toBe(503);
    expect(takeFault(queue, 'media_download')).toBeUndefined();
    expect(queue).toEqual([]);
  });
});
