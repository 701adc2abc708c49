// The password rules: pure, no hashing (that is adapters/password-hash.ts).

const COMMON = new Set([
  'password',
  'password1',
  'password123',
  '12345678',
  '123456789',
  '1234567890',
  'qwertyuiop',
  'iloveyou',
  'letmein123',
  'welcome123',
  'admin12345',
  'whatsapp123',
]);

export const PASSWORD_MIN_LENGTH = 10;

/** The password rules; each broken rule is one message for the `password` field. */
export function passwordProblems(
  password: string,
  user: { username?: string | undefined; email?: string | undefined },
): string[] {
  const problems: string[] = [];
  if (password.length < PASSWORD_MIN_LENGTH) {
    problems.push(`This password is too short. It must contain at least ${PASSWORD_MIN_LENGTH} characters.`);
  }
  if (password.length > 256)
    problems.push('This password is too long. It must contain at most 256 characters.');
  if (/^\d+$/.test(password)) problems.push('This password is entirely numeric.');
  if (COMMON.has(password.toLowerCase())) problems.push('This password is too common.');
  const lower = password.toLowerCase();
  for (const attr of [user.username, user.email?.split('@')[0]]) {
    if (
      attr &&
      attr.length >= 3 &&
      (lower.includes(attr.toLowerCase()) || attr.toLowerCase().includes(lower))
    ) {
      problems.push('The password is too similar to the username or e-mail.');
      break;
    }
  }
  return problems;
}
