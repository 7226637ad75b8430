// Sign-in and sessions: register, login (web and native), refresh with rotation and reuse
// detection, logout, and API keys. Refresh tokens and API keys are stored as SHA-256 hashes.
import { randomUUID } from 'node:crypto';
import { type Db, inUnit, transaction } from '../../platform/db/database.js';
import { noticeLater, type ChangeFeed } from '../../platform/db/notifications.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import { AppError, validationFailed } from '../../platform/http/problem.js';
import type { ApiKeyPrincipal } from '../../platform/http/auth.js';
import { rateLimited, type CounterStore } from '../../platform/http/rate-limit.js';
import type { AccessTokens } from '../../platform/security/jwt.js';
import { CLIENT_TYPES, type ApiScope, type ClientType } from '../../platform/security/identity.rules.js';
import { burnPasswordCheck, randomToken, sha256, verifyPassword } from '../../platform/security/secrets.js';
import { toProfile, type UsersService, type UserRow } from '../users/index.js';
import * as repo from './auth.repository.js';
import type { ApiKeyDto, TokenResponse } from './auth.schemas.js';

export interface AuthServiceOptions {
  refreshTtlSeconds: number;
  loginFailureLimit: number;
  loginFailureWindowSec: number;
  /** Called once a registration is stored: sends the verification mail. */
  onRegistered?: (user: UserRow) => Promise<void>;
  /** Says that a session of account `id` began or ended, through the writer's unit of work: once
   * it committed, every node judges the account's access tokens afresh. */
  accountChanged?: (uow: UnitOfWork, id: number) => void;
  /** How long a node answers an API key from its cache (0: never); revocations reach every node
   * through `changes`. */
  apiKeyCacheMs?: number;
  changes?: ChangeFeed;
}

const API_KEY_REVOKED = 'api_key_revoked';

interface CachedApiKey {
  principal: ApiKeyPrincipal | null;
  at: number;
  usedAt: number;
}

export class AuthService {
  /** Verified API keys by hash (null: no such active key), the oldest first. */
  private readonly apiKeys = new Map<string, CachedApiKey>();
  private keyGeneration = 0;

  constructor(
    private readonly db: Db,
    private readonly users: UsersService,
    private readonly tokens: AccessTokens,
    private readonly counters: CounterStore,
    private readonly opts: AuthServiceOptions,
  ) {
    opts.changes?.listen(API_KEY_REVOKED, {
      onNotice: (id) => this.forgetApiKey(Number(id)),
      onReset: () => this.forgetApiKey(undefined),
    });
  }

  async register(
    input: { email: string; password: string; name?: string | undefined },
    clientType: ClientType = 'web_portal',
  ) {
    const user = await this.users.create({ email: input.email, password: input.password, name: input.name });
    await this.opts.onRegistered?.(user);
    return { user, tokens: await this.issue(user, clientType) };
  }

  /** Email + password → tokens. The same 401 whether the email exists or not; after too many
   * failures for this IP and email, 429 even for the right password until the window passes.
   * Each attempt is counted (one atomic increment) before its password is checked, so parallel
   * guesses cannot all be checked before the first failure is counted; a success clears the
   * count. */
  async login(email: string, password: string, clientType: ClientType, ip: string): Promise<TokenResponse> {
    const key = `login-fail:${ip}:${email.trim().toLowerCase()}`;
    const attempts = await this.counters.hit(key, this.opts.loginFailureWindowSec * 1000);
    if (attempts.count > this.opts.loginFailureLimit) {
      throw rateLimited(attempts.resetAt, () => 'Too many failed sign-in attempts; try again later');
    }
    const user = await this.users.findByEmail(email.trim());
    const ok = user?.password_hash
      ? await verifyPassword(user.password_hash, password)
      : (await burnPasswordCheck(password), false);
    if (!user || !ok) throw new AppError('invalid_credentials', 'The email or password is not correct');
    await this.counters.reset(key);
    return this.issue(user, clientType);
  }

  /** Starts a new token family (one per sign-in, so several sessions coexist), or, given one,
   * goes on with it (a refresh). */
  async issue(
    user: UserRow,
    clientType: ClientType,
    session?: string,
    uow?: UnitOfWork,
  ): Promise<TokenResponse> {
    const familyId = session ?? randomUUID();
    const refreshToken = randomToken(32);
    await inUnit(this.db, uow, async (unit) => {
      await repo.insertRefreshToken(unit.trx, {
        userId: user.id,
        familyId,
        tokenHash: sha256(refreshToken),
        clientType,
        expiresAt: new Date(Date.now() + this.opts.refreshTtlSeconds * 1000),
      });
      // A node's cached copy of the account lists its live sessions without this new one, and
      // would refuse its access token until the copy lapses: every node drops it.
      if (session === undefined) this.opts.accountChanged?.(unit, user.id);
    });
    const accessToken = await this.tokens.sign(
      { id: user.id, role: user.role, name: user.name, accountType: user.account_type, clientType },
      this.tokens.ttlSeconds,
      familyId,
    );
    return {
      accessToken,
      refreshToken,
      tokenType: 'Bearer',
      expiresIn: this.tokens.ttlSeconds,
      user: toProfile(user),
    };
  }

  /** Rotation: the presented token is spent and a new one of the same family issued. A spent
   * token presented again means it leaked: the whole family is revoked. */
  async refresh(refreshToken: string): Promise<TokenResponse> {
    const outcome = await transaction(this.db, async (uow) => {
      const { trx } = uow;
      const row = await repo.findRefreshTokenForUpdate(trx, sha256(refreshToken));
      if (!row) return { error: new AppError('unauthenticated', 'The refresh token is not valid') };
      if (row.revoked_at)
        return { error: new AppError('unauthenticated', 'The refresh token has been revoked') };
      if (row.used_at) {
        await this.endFamily(uow, row.user_id, row.family_id);
        return {
          error: new AppError(
            'refresh_token_reused',
            'This refresh token was already used; every session of its family has been signed out',
          ),
        };
      }
      if (row.expires_at.getTime() <= Date.now())
        return { error: new AppError('unauthenticated', 'The refresh token has expired') };
      await repo.markRefreshTokenUsed(trx, row.id);
      const user = await this.users.get(row.user_id, trx);
      return { error: undefined, tokens: await this.issue(user, row.client_type, row.family_id, uow) };
    });
    // The family revocation must commit even though the caller gets an error.
    if (outcome.error) throw outcome.error;
    return outcome.tokens;
  }

  /** Ends the session the refresh token belongs to. Unknown tokens are ignored (no oracle). */
  async logout(refreshToken: string): Promise<void> {
    await transaction(this.db, async (uow) => {
      const row = await repo.findRefreshTokenForUpdate(uow.trx, sha256(refreshToken));
      if (row) await this.endFamily(uow, row.user_id, row.family_id);
    });
  }

  /** Ends every session of the account (password reset, an account claimed). */
  async revokeAllSessions(userId: number, uow: UnitOfWork): Promise<void> {
    await repo.revokeAllForUser(uow.trx, userId);
    this.opts.accountChanged?.(uow, userId);
  }

  private async endFamily(uow: UnitOfWork, userId: number, familyId: string) {
    await repo.revokeFamily(uow.trx, familyId);
    this.opts.accountChanged?.(uow, userId);
  }

  /** The sessions of each of `userIds` not ended that issued an access token within an access
   * token's lifetime (a minute of leeway): only their access tokens are accepted. The account
   * cache's batched misses, read together with the accounts' rows. */
  async liveSessionsOf(userIds: number[]): Promise<Map<number, Set<string>>> {
    const sessions = new Map(userIds.map((id) => [id, new Set<string>()]));
    for (const r of await repo.familiesLiveSince(this.db, userIds, this.tokens.ttlSeconds + 60))
      sessions.get(r.user_id)?.add(r.family_id);
    return sessions;
  }

  /** `owner`: the account the key belongs to (its creator, or the account it is made for); an
   * `mcp` key acts as it. */
  async createApiKey(name: string, scopes: ApiScope[], owner: number | null) {
    if (owner !== null && !(await this.users.exists(owner)))
      throw validationFailed([{ path: 'userId', message: `no user ${owner}` }]);
    const prefix = randomToken(6).replace(/[-_]/g, 'x').slice(0, 8);
    const key = `apk_${prefix}_${randomToken(32)}`;
    const row = await repo.insertApiKey(this.db, {
      name,
      prefix,
      keyHash: sha256(key),
      scopes: [...new Set(scopes)],
      createdBy: owner,
    });
    return { ...row, key };
  }

  /** The key's principal, or null for an unknown or revoked key. Answers are cached per node for
   * `apiKeyCacheMs` (a game server sends its key with every event); a revocation is announced on
   * the change feed and drops the key's entry on every node at once. */
  async verifyApiKey(key: string): Promise<ApiKeyPrincipal | null> {
    if (key.length > 200) return null;
    const hash = sha256(key);
    const now = Date.now();
    const cached = this.apiKeys.get(hash);
    if (cached && now - cached.at < (this.opts.apiKeyCacheMs ?? 0)) {
      if (cached.principal) await this.touch(cached, now);
      return cached.principal;
    }
    const generation = this.keyGeneration;
    const row = await repo.findActiveApiKey(this.db, hash);
    const entry: CachedApiKey = {
      principal: row
        ? { kind: 'apiKey', id: row.id, name: row.name, scopes: row.scopes, userId: row.created_by_user_id }
        : null,
      at: now,
      usedAt: row?.last_used_at?.getTime() ?? 0,
    };
    // Not stored when a key was revoked while this one was read (it may be the one).
    if ((this.opts.apiKeyCacheMs ?? 0) > 0 && generation === this.keyGeneration) {
      if (this.apiKeys.size >= 10_000) this.apiKeys.delete(this.apiKeys.keys().next().value!);
      this.apiKeys.set(hash, entry);
    }
    if (entry.principal) await this.touch(entry, now);
    return entry.principal;
  }

  /** Records use at most once a minute: a busy integration should not write on every call. */
  private async touch(entry: CachedApiKey, now: number) {
    if (!entry.principal || now - entry.usedAt <= 60_000) return;
    entry.usedAt = now;
    await repo.touchApiKey(this.db, entry.principal.id);
  }

  async listApiKeys(): Promise<ApiKeyDto[]> {
    return (await repo.listApiKeys(this.db)).map((k) => ({
      id: k.id,
      name: k.name,
      scopes: k.scopes,
      prefix: k.prefix,
      createdAt: k.created_at.toISOString(),
      lastUsedAt: k.last_used_at?.toISOString() ?? null,
      revokedAt: k.revoked_at?.toISOString() ?? null,
    }));
  }

  /** The revocation and the notice that every node forget the key commit together: a node
   * never keeps accepting a key revoked for want of a notice lost in between. */
  async revokeApiKey(id: number): Promise<void> {
    await transaction(this.db, async (uow) => {
      const r = await repo.revokeApiKey(uow.trx, id);
      if (Number(r.numUpdatedRows) === 0 && !(await repo.apiKeyExists(uow.trx, id)))
        throw new AppError('not_found', 'No such API key');
      if (this.opts.changes) void noticeLater(uow, API_KEY_REVOKED, String(id));
    });
    this.forgetApiKey(id);
  }

  private forgetApiKey(id: number | undefined) {
    this.keyGeneration++;
    for (const [hash, entry] of this.apiKeys)
      if (id === undefined || entry.principal?.id === id) this.apiKeys.delete(hash);
  }

  /** For the admin statistics: sign-in sessions per client type over the last `hours` (spec:
   * client types are "tracked for analytics"), every client type listed, in the spec's order.
   * `sessions`: those in use in the window (signed in or refreshed: a client refreshes at least
   * once per access token's life while it is used); `signIns`: those begun in it. */
  async sessionStats(
    hours: number,
  ): Promise<{ clientType: ClientType; sessions: number; signIns: number }[]> {
    const rows = (await repo.sessionsByClientType(this.db, hours)).rows;
    const by = new Map(rows.map((r) => [r.client_type, r]));
    return CLIENT_TYPES.map((clientType) => ({
      clientType,
      sessions: Number(by.get(clientType)?.sessions ?? 0),
      signIns: Number(by.get(clientType)?.sign_ins ?? 0),
    }));
  }

  /** The maintenance sweep: refresh tokens that expired more than a day ago. */
  async sweepExpiredTokens(): Promise<number> {
    const r = await repo.deleteExpiredRefreshTokens(this.db);
    return r.reduce((n, x) => n + Number(x.numDeletedRows), 0);
  }
}
