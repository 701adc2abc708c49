import { request } from 'undici';
import { z } from 'zod';

/**
 * The provisioner's calls to an instance's own inbox API, on loopback: its health check and,
 * for activation, the admin's password change (as the admin, through the public API, so the
 * instance's rules apply as to any client).
 */
export async function instanceHealthy(port: number, timeoutMs = 2_000): Promise<boolean> {
  try {
    const res = await request(`http://127.0.0.1:${port}/api/v1/status/health/`, {
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

async function call(
  port: number,
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  token: string | null,
  body?: unknown,
) {
  const res = await request(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: {
      ...(body !== undefined && { 'content-type': 'application/json' }),
      ...(token && { authorization: `Token ${token}` }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? (JSON.parse(text) as unknown) : undefined };
}

export class PasswordRefusedError extends Error {
  override readonly name = 'PasswordRefusedError';
}

/** Logs in as the admin with the password the provisioner set, then sets the admin's own. */
export async function setAdminPassword(
  port: number,
  admin: { username: string; currentPassword: string; newPassword: string },
): Promise<void> {
  const login = await call(port, 'POST', '/api/v1/auth/token/', null, {
    username: admin.username,
    password: admin.currentPassword,
  });
  if (login.status !== 200) throw new Error(`admin login answered ${login.status}`);
  const { token } = z.object({ token: z.string() }).parse(login.json);
  const me = await call(port, 'GET', '/api/v1/users/me/', token);
  if (me.status !== 200) throw new Error(`users/me answered ${me.status}`);
  const { id } = z.object({ id: z.number() }).parse(me.json);
  const patch = await call(port, 'PATCH', `/api/v1/users/${id}/`, token, { password: admin.newPassword });
  if (patch.status === 400) {
    const fields = z
      .object({ fields: z.record(z.string(), z.array(z.string())).optional() })
      .safeParse(patch.json);
    throw new PasswordRefusedError(
      fields.success
        ? (fields.data.fields?.password ?? ['The password is not accepted.']).join(' ')
        : 'The password is not accepted.',
    );
  }
  if (patch.status !== 200) throw new Error(`password change answered ${patch.status}`);
}
