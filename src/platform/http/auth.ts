// Who may call what (contract: "Who may call what"), deny by default: a route must say
// `config: { auth: 'public' }` to be reachable without credentials; a route that says nothing
// needs a valid access token. One onRequest hook enforces it for every route.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from './problem.js';
import type { AccessClaims } from '../security/jwt.js';
import type { AccountState } from '../security/account-state.js';
import {
  isAdmin,
  type AccountType,
  type ApiScope,
  type ClientType,
  type Role,
} from '../security/identity.rules.js';

export type AuthRequirement = 'public' | 'user' | 'admin' | { hybrid: ApiScope } | { userOrKey: ApiScope };

export interface UserPrincipal {
  kind: 'user';
  id: number;
  role: Role;
  accountType: AccountType;
  name: string;
  admin: boolean;
  jti: string;
  /** Access token expiry, epoch seconds. */
  exp: number;
  /** The sign-in session (refresh-token family) the token belongs to, when it names one. */
  sid: string | undefined;
  /** The client the caller uses (spec: "Client types", tracked for analytics and context): the
   * one its session signed in with (the access token's `clientType`), `api` for an API key acting
   * as its account; undefined for the service's own tasks and a token signed without one. A
   * socket's is `socket.data.user.clientType`, so a chat turn has it on its `user`. */
  clientType: ClientType | undefined;
}

export interface ApiKeyPrincipal {
  kind: 'apiKey';
  id: number;
  name: string;
  scopes: ApiScope[];
  /** The account the key belongs to (who created it, or the account it was made for); a key with
   * the `mcp` scope acts as that account. Null when none (made by the CLI without --user). */
  userId: number | null;
}

export type Principal = UserPrincipal | ApiKeyPrincipal;

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRequirement;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export interface AuthDeps {
  verifyAccessToken(token: string): AccessClaims;
  /** The account's current state (cached per node for seconds), or undefined when it is gone. */
  accountState(id: number): AccountState | undefined | Promise<AccountState | undefined>;
  /** Returns the key's principal, or null for an unknown or revoked key. */
  verifyApiKey(key: string): Promise<ApiKeyPrincipal | null>;
  adminUserIds: readonly number[];
}

export function bearerToken(header: string | undefined): string | null | undefined {
  if (header === undefined) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/** The token's bearer as the account is now: the claims say who, the account's current state
 * says what they may do. A deleted account, an ended session, or a session (or account) this
 * database never had (a token signed with the same secret elsewhere) is not signed in. */
export async function userFromToken(deps: AuthDeps, token: string): Promise<UserPrincipal> {
  const claims = deps.verifyAccessToken(token);
  return principalOf(claims, await deps.accountState(claims.id), deps.adminUserIds);
}

export function principalOf(
  claims: AccessClaims,
  state: AccountState | undefined,
  adminUserIds: readonly number[],
): UserPrincipal {
  if (!state) throw new AppError('unauthenticated', 'The account of this access token no longer exists');
  if (claims.sid === undefined || !state.liveSessions.has(claims.sid))
    throw new AppError('unauthenticated', 'The session of this access token has ended; sign in again');
  const current = { id: claims.id, role: state.role, accountType: state.accountType };
  return {
    kind: 'user',
    id: claims.id,
    role: state.role,
    accountType: state.accountType,
    name: state.name,
    admin: isAdmin(current, adminUserIds),
    jti: claims.jti,
    exp: claims.exp,
    sid: claims.sid,
    clientType: claims.clientType,
  };
}

export function registerAuth(app: FastifyInstance, deps: AuthDeps) {
  app.decorateRequest('principal', null);

  app.addHook('onRequest', async (request) => {
    // Unmatched routes fall through to the 404 handler; Fastify gives them no route config.
    const url = request.routeOptions.url;
    if (!url) return;
    const requirement: AuthRequirement = request.routeOptions.config.auth ?? 'user';
    if (requirement === 'public') {
      // Public routes still learn who is calling when a valid token is offered (e.g. logout).
      return;
    }

    const header = request.headers.authorization;
    const token = bearerToken(header);
    if (token === null)
      throw new AppError('unauthenticated', 'The Authorization header must be "Bearer <token>"');

    if (typeof requirement === 'object' && 'userOrKey' in requirement) {
      // A user's own door: their access token, or (only when no token is sent) an API key with
      // the scope, acting as the account it belongs to. Either way the caller is that user.
      // MCP clients that can only send a bearer header may send the key as one.
      const bearerKey = token?.startsWith('apk_') ? token : undefined;
      if (token !== undefined && !bearerKey) {
        request.principal = await userFromToken(deps, token);
        return;
      }
      const key = bearerKey ?? request.headers['x-api-key'];
      if (typeof key !== 'string' || key.length === 0)
        throw new AppError('unauthenticated', 'An access token or an X-API-Key header is required');
      request.principal = await userFromApiKey(
        deps,
        await apiKeyWithScope(deps, key, requirement.userOrKey, request),
      );
      return;
    }

    if (typeof requirement === 'object') {
      // Hybrid: a present token is judged on its own (a bad one is never rescued by a key);
      // only an absent one falls back to the API key.
      if (token !== undefined) {
        const user = await userFromToken(deps, token);
        // Known before a refusal too: the audit log names who was refused.
        request.principal = user;
        if (!user.admin)
          throw new AppError('forbidden', 'Only administrators or API keys may call this endpoint');
        return;
      }
      const key = request.headers['x-api-key'];
      if (typeof key !== 'string' || key.length === 0)
        throw new AppError('unauthenticated', 'An admin access token or an X-API-Key header is required');
      request.principal = await apiKeyWithScope(deps, key, requirement.hybrid, request);
      return;
    }

    if (token === undefined) throw new AppError('unauthenticated', 'An access token is required');
    const user = await userFromToken(deps, token);
    request.principal = user;
    if (requirement === 'admin' && !user.admin)
      throw new AppError('forbidden', 'Administrator access is required');
  });
}

/** The key's principal when it is valid and has the scope; else the 401 or 403 that says why. */
/** A valid key with the scope. A valid key without it is refused after the request records who
 * called (the audit log names the key of a refusal). */
async function apiKeyWithScope(
  deps: AuthDeps,
  key: string,
  scope: ApiScope,
  request: { principal?: unknown },
): Promise<ApiKeyPrincipal> {
  const principal = await deps.verifyApiKey(key);
  if (!principal) throw new AppError('unauthenticated', 'The API key is not valid');
  request.principal = principal;
  if (!principal.scopes.includes(scope))
    throw new AppError('forbidden', `The API key lacks the scope ${scope}`, { requiredScope: scope });
  return principal;
}

/** An API key acting as the account it belongs to (`userOrKey` routes): that account's rights as
 * they are now. */
export async function userFromApiKey(deps: AuthDeps, key: ApiKeyPrincipal): Promise<UserPrincipal> {
  if (key.userId === null)
    throw new AppError('forbidden', 'This API key belongs to no account: create it for a user (userId)');
  const state = await deps.accountState(key.userId);
  if (!state) throw new AppError('unauthenticated', 'The account of this API key no longer exists');
  const current = { id: key.userId, role: state.role, accountType: state.accountType };
  return {
    kind: 'user',
    id: key.userId,
    role: state.role,
    accountType: state.accountType,
    name: state.name,
    admin: isAdmin(current, deps.adminUserIds),
    jti: `api-key:${key.id}`,
    exp: Number.MAX_SAFE_INTEGER,
    sid: undefined,
    clientType: 'api',
  };
}

/** The authenticated user of a route whose requirement is 'user' or 'admin'. */
export function currentUser(request: FastifyRequest): UserPrincipal {
  const p = request.principal;
  if (!p || p.kind !== 'user') throw new AppError('unauthenticated', 'An access token is required');
  return p;
}

/** A non-admin may act only on themselves; admins may name anyone. Returns the target id. */
export function selfOrAdmin(user: UserPrincipal, requestedUserId: number | undefined): number {
  if (requestedUserId === undefined || requestedUserId === user.id) return user.id;
  if (!user.admin) throw new AppError('forbidden', "You may not act on another user's data");
  return requestedUserId;
}
