import { describe, expect, it } from 'vitest';
import { isBase64 } from './base64.ts';

describe('isBase64', () => {
  it.each([
    ['', true],
    ['QQ==', true],
    ['QUI=', true],
    ['QUJD', true],
    ['QQ', true],
    ['QUI', true],
    ['Q', false],
    ['QQ=', false],
    ['Q===', false],
    ['QU=I', false],
    ['not base64!', false],
    ['QUJD-_', false],
  ])('%j is %s', (text, valid) => {
    expect(isBase64(text)).toBe(valid);
  });

  it('checks a file of tens of megabytes without overflowing the stack', () => {
    const big = Buffer.alloc(60 * 1024 * 1024, 7).toString('base64');
    expect(isBase64(big)).toBe(true);
    expect(isBase64(`${big.slice(0, -4)}!AAA`)).toBe(false);
  });
});
