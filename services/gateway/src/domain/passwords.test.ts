import { describe, expect, it } from 'vitest';
import { PASSWORD_MIN_LENGTH, passwordProblems } from './passwords.ts';

describe('passwordProblems', () => {
  it('accepts a long, uncommon password unrelated to the user', () => {
    expect(
      passwordProblems('correct horse battery', { username: 'alice', email: 'alice@example.com' }),
    ).toEqual([]);
  });

  it('refuses a short one', () => {
    const problems = passwordProblems('x'.repeat(PASSWORD_MIN_LENGTH - 1), {});
    expect(problems).toEqual([expect.stringContaining('too short')]);
  });

  it('accepts exactly the minimum length', () => {
    expect(passwordProblems('k7#'.repeat(4).slice(0, PASSWORD_MIN_LENGTH), {})).toEqual([]);
  });

  it('refuses one longer than 256 characters', () => {
    expect(passwordProblems('ab'.repeat(129), {})).toEqual([expect.stringContaining('too long')]);
  });

  it('refuses an entirely numeric one', () => {
    expect(passwordProblems('98127364501', {})).toEqual(['This password is entirely numeric.']);
  });

  it('refuses a common one, whatever its case', () => {
    expect(passwordProblems('WhatsApp123', {})).toEqual(['This password is too common.']);
  });

  it('refuses one numeric, common and short at once with every message', () => {
    expect(passwordProblems('12345678', {})).toHaveLength(3);
  });

  it('refuses one similar to the username or the e-mail’s local part', () => {
    const similar = 'The password is too similar to the username or e-mail.';
    expect(passwordProblems('my-Margarethe-pw', { username: 'margarethe' })).toEqual([similar]);
    expect(passwordProblems('xx-bobsmith-xx', { email: 'bobsmith@example.com' })).toEqual([similar]);
  });

  it('ignores usernames shorter than 3 characters', () => {
    expect(passwordProblems('al-correct-horse', { username: 'al' })).toEqual([]);
  });
});
