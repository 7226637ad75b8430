import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { batchedByKey } from '../../platform/db/batched.js';
import type { Db } from '../../platform/db/database.js';
import { PgChangeFeed, type ChangeFeed } from '../../platform/db/notifications.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import type { CounterStore } from '../../platform/http/rate-limit.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import { createMailer, type Mailer } from '../../platform/mail/mailer.js';
import { AccountStates, type AccountState } from '../../platform/security/account-state.js';
import type { AccessTokens } from '../../platform/security/jwt.js';
import { UsersService } from '../users/index.js';
import { AccountEmailService, enqueueVerification } from './account-email.service.js';
import { AuthService } from './auth.service.js';
import { OAuthService } from './oauth.service.js';
import { PlayersService } from './players.service.js';
import './auth.tables.js';
import './oauth.tables.js';

export { emailSchema, passwordSchema, scopeSchema } from './auth.schemas.js';
export { AuthService } from './auth.service.js';
export { PlayersService } from './players.service.js';
export { clientTypeSchema, tokenResponse } from './auth.schemas.js';
export { AccountEmailService, enqueueVerification } from './account-email.service.js';
export { OAuthService } from './oauth.service.js';
export { authPlugin, type AuthPluginOptions } from './auth.plugin.js';

export interface IdentityParts {
  db: Db;
  jobs: JobQueue;
  log: Logger;
  tokens: AccessTokens;
  counters: CounterStore;
  /** What other nodes say changed (accounts, revoked API keys). */
  changes: ChangeFeed;
  /** Registers what to release at shutdown (the last registered is released first). */
  onClose: (close: () => Promise<unknown>) => void;
}

/** Builds identity: each account's current rights (cached per node), users, sign-in, account
 * mail and OAuth. A request's rights come from the account as it is now: its row (the users
 * module's) and its live sessions (this module's), read together when not cached. */
export async function createIdentityModule(
  p: IdentityParts,
  config: Pick<
    Config,
    | 'jwt'
    | 'limits'
    | 'accountCacheMs'
    | 'mail'
    | 'appUrl'
    | 'publicUrl'
    | 'accountEmail'
    | 'oauth'
    | 'oauthFlow'
  >,
) {
  const { db, jobs, log, counters, changes } = p;
  // The cache's misses of concurrent requests share one statement: both owners' reads of a batch
  // (the accounts' rows, their sessions) are read together (read-together.ts).
  const statesOf = batchedByKey(
    async (ids: number[]) => {
      const [rows, sessions] = await Promise.all([users.accessOfMany(ids), auth.liveSessionsOf(ids)]);
      return rows.map((r) => {
        const liveSessions = sessions.get(r.id) ?? new Set<string>();
        const state: AccountState = { role: r.role, accountType: r.account_type, name: r.name, liveSessions };
        return { id: r.id, state };
      });
    },
    (loaded) => loaded.id,
  );
  const accounts: AccountStates = new AccountStates(async (id) => (await statesOf(id))?.state, changes, {
    ttlMs: config.accountCacheMs,
  });
  p.onClose(async () => accounts.close());
  const accountChanged = (uow: UnitOfWork, id: number) => accounts.changedIn(uow, id);
  const users = new UsersService(db, { accountChanged, cachedAccess: (id) => accounts.get(id) });
  const auth = createAuthService(
    { db, jobs, log, users, tokens: p.tokens, counters, changes, accountChanged },
    config,
  );
  // Listening before the first request, so no change said from then on is missed.
  if (changes instanceof PgChangeFeed) await changes.ready();
  const mailer = createMailer(config.mail, db, log);
  p.onClose(() => mailer.close());
  const { accountEmail, oauth } = createAccountServices(
    { db, jobs, log, users, counters, auth, mailer },
    config,
  );
  const players = new PlayersService(db, users, auth);
  return { accounts, users, auth, accountEmail, oauth, players };
}

interface AuthModuleParts {
  db: Db;
  jobs: JobQueue;
  log: Logger;
  users: UsersService;
  tokens: AccessTokens;
  counters: CounterStore;
  /** What other nodes say changed (revoked API keys). */
  changes: ChangeFeed;
  /** Tells every node's account cache that an account changed (once the writer's unit commits). */
  accountChanged: (uow: UnitOfWork, id: number) => void;
}

/** Builds sign-in, tokens and API keys. Registration queues the verification mail (the
 * account-mail job) before it answers. */
function createAuthService(p: AuthModuleParts, config: Pick<Config, 'jwt' | 'limits' | 'accountCacheMs'>) {
  const { db, jobs, log } = p;
  return new AuthService(db, p.users, p.tokens, p.counters, {
    refreshTtlSeconds: config.jwt.refreshTtl,
    loginFailureLimit: config.limits.loginFailures,
    loginFailureWindowSec: config.limits.loginFailureWindowSec,
    onRegistered: (user) => enqueueVerification(jobs, db, log, user),
    accountChanged: p.accountChanged,
    apiKeyCacheMs: config.accountCacheMs,
    changes: p.changes,
  });
}

/** Builds what an account reaches by mail (verification, password reset) and OAuth sign-in. */
function createAccountServices(
  p: Pick<AuthModuleParts, 'db' | 'jobs' | 'log' | 'users' | 'counters'> & {
    auth: AuthService;
    mailer: Mailer;
  },
  config: Pick<Config, 'appUrl' | 'publicUrl' | 'accountEmail' | 'oauth' | 'oauthFlow'>,
) {
  const { db, users, auth, log } = p;
  const accountEmail = new AccountEmailService(db, users, auth, p.jobs, p.mailer, p.counters, log, {
    appUrl: config.appUrl,
    verifyTtlSeconds: config.accountEmail.verifyTtl,
    resetTtlSeconds: config.accountEmail.resetTtl,
    mailsPerHour: config.accountEmail.mailsPerHour,
  });
  const oauth = new OAuthService(db, users, auth, log, {
    providers: config.oauth.providers,
    publicUrl: config.publicUrl,
    appUrl: config.appUrl,
    blockedCountries: config.oauth.blockedCountries,
    stateTtlSeconds: config.oauthFlow.stateTtl,
    loginCodeTtlSeconds: 60, // the API contract: the app trades the code once, within 60 s
    providerTimeoutSeconds: config.oauthFlow.providerTimeout,
  });
  if (config.oauth.blockedCountries.length > 0 && !config.oauth.countryHeader)
    log.warn('BLOCKED_COUNTRIES has no effect without COUNTRY_HEADER (the header a trusted proxy sets)');
  return { accountEmail, oauth };
}
