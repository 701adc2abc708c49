import { activate, activationState } from '../use-cases/activation.ts';
import type { UseCaseDeps } from '../use-cases/deps.ts';
import type { ActivationPages } from './edge.ts';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.4rem}button{margin-top:1rem;padding:.5rem 1rem}.error{color:#a00}</style>
</head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

function form(username: string, error?: string): string {
  return page(
    'Activate your inbox',
    `<p>Admin: <strong>${escapeHtml(username)}</strong>. Choose your password (at least 10 characters).</p>
${error ? `<p class="error">${escapeHtml(error)}</p>` : ''}
<form method="post"><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" required minlength="10">
<label for="password_again">Password again</label><input id="password_again" name="password_again" type="password" autocomplete="new-password" required minlength="10">
<button type="submit">Save</button></form>`,
  );
}

const NOT_READY = page(
  'Not ready yet',
  '<p>The inbox is still being set up. Try this link again in a minute.</p>',
);
const INVALID = page(
  'Link not valid',
  '<p>This activation link is unknown, was used already, or its inbox is gone.</p>',
);

/** The minimal activation page: the admin sets a password with the one-time token. */
export function activationPages(deps: UseCaseDeps): ActivationPages {
  return {
    async show(subdomain, token) {
      const state = await activationState(deps, subdomain, token);
      if (state.kind === 'usable') return { status: 200, html: form(state.adminUsername) };
      if (state.kind === 'not_ready') return { status: 409, html: NOT_READY };
      return { status: 404, html: INVALID };
    },
    async submit(subdomain, token, fields) {
      const password = fields.get('password') ?? '';
      const again = fields.get('password_again') ?? password;
      if (password !== again) {
        const state = await activationState(deps, subdomain, token);
        if (state.kind === 'usable')
          return { status: 400, html: form(state.adminUsername, 'The passwords differ.') };
      }
      const result = await activate(deps, subdomain, token, password);
      switch (result.kind) {
        case 'done':
          return {
            status: 200,
            html: page(
              'Inbox activated',
              `<p>The password of <strong>${escapeHtml(result.adminUsername)}</strong> is set. Sign in to the admin panel with it.</p>`,
            ),
          };
        case 'refused': {
          const state = await activationState(deps, subdomain, token);
          return state.kind === 'usable'
            ? { status: 400, html: form(state.adminUsername, result.reason) }
            : { status: 404, html: INVALID };
        }
        case 'not_ready':
          return { status: 409, html: NOT_READY };
        case 'invalid':
          return { status: 404, html: INVALID };
        default:
          return { status: 404, html: INVALID };
      }
    },
  };
}
