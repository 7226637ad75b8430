// The one door to the HTTP API: openapi-fetch typed by the typed client's REST types
// (src/client/api.generated.ts, generated from our own /api/openapi.json by `npm run
// client:types`; a test fails when they drift). Every request carries the in-memory access token;
// a 401 `token_expired` refreshes once and retries.
import createClient from 'openapi-fetch';
import type { components, paths } from '../../../src/client/api.generated';
import { TokenStore, type TokenResponse } from '../lib/tokens';

export type Schemas = components['schemas'];
export type Problem = Schemas['Problem'] & {
  code: string;
  missing?: string[];
  errors?: { path: string; message: string }[];
};

async function postRefresh(refreshToken: string): Promise<TokenResponse | null> {
  const res = await fetch('/api/auth/refresh', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refreshToken }),
  });
  if (res.status === 200) return (await res.json()) as TokenResponse;
  if (res.status >= 500) throw new Error(`refresh failed: ${res.status}`);
  return null;
}

export const tokens = new TokenStore({
  refresh: postRefresh,
  storage: window.sessionStorage,
  now: () => Date.now(),
});

/** fetch with the bearer token, retried once after a refresh when the server says it expired. */
export async function authFetch(input: Request): Promise<Response> {
  const retry = input.clone();
  const token = await tokens.accessToken();
  if (token) input.headers.set('authorization', `Bearer ${token}`);
  const res = await fetch(input);
  if (res.status !== 401 || !token) return res;
  const problem = (await res.clone().json()) as { code?: string };
  if (problem.code !== 'token_expired') return res;
  const fresh = await tokens.refresh();
  if (!fresh) return res;
  retry.headers.set('authorization', `Bearer ${fresh}`);
  return fetch(retry);
}

export const api = createClient<paths>({ baseUrl: window.location.origin, fetch: authFetch });

/** A problem's sentence for the person: its detail, the guard's missing items, or its title. */
export function describe(error: unknown): string {
  if (!error || typeof error !== 'object') return 'Something went wrong.';
  const p = error as Partial<Problem>;
  if (p.code === 'guard_not_satisfied' && p.missing?.length)
    return `Not yet: missing ${p.missing.join(', ')}.`;
  if (p.errors?.length) return p.errors.map((e) => e.message).join('; ');
  return p.detail ?? p.title ?? 'Something went wrong.';
}

/** Signs in, registers or trades a one-time code; the answer is kept by the token store. */
export async function startSession(
  kind: 'login' | 'register' | 'exchange',
  body: Record<string, string>,
): Promise<string | null> {
  const res = await fetch(`/api/auth/${kind}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as TokenResponse | Problem;
  if (!res.ok) return describe(json);
  tokens.accept(json as TokenResponse);
  return null;
}

export async function signOut(): Promise<void> {
  const refreshToken = tokens.refreshToken();
  tokens.clear();
  if (refreshToken)
    await fetch('/api/auth/logout', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken }),
    }).catch(() => undefined);
}
