import { describe, expect, it } from 'vitest';
import { envTrustProxy } from './config.ts';

describe('envTrustProxy', () => {
  it('is off unless set', () => {
    expect(envTrustProxy.parse(undefined)).toBe(false);
    for (const off of ['', 'false', 'FALSE', '0', 'no', 'off']) expect(envTrustProxy.parse(off)).toBe(false);
  });

  it('takes the proxies’ addresses and proxy-addr’s range names', () => {
    expect(envTrustProxy.parse('uniquelocal')).toEqual(['uniquelocal']);
    expect(envTrustProxy.parse('Loopback,10.1.2.3')).toEqual(['loopback', '10.1.2.3']);
    expect(envTrustProxy.parse('10.0.0.0/8, 192.168.1.4,fd00::/8')).toEqual([
      '10.0.0.0/8',
      '192.168.1.4',
      'fd00::/8',
    ]);
  });

  it('refuses to believe every hop, a bare hop count, and what is not an address', () => {
    for (const bad of ['true', 'True', 'yes', 'on', '1', '2']) {
      const r = envTrustProxy.safeParse(bad);
      expect(r.success).toBe(false);
      expect(r.error?.issues[0]?.message).toMatch(/addresses of the proxies in front/);
    }
    for (const bad of ['proxy.local', '10.0.0.0/33', '::1/129', '10.0.0.1/8/2', '-1', '1.5', 'everywhere']) {
      expect(envTrustProxy.safeParse(bad).success, bad).toBe(false);
    }
  });
});
