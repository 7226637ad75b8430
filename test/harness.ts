// The test harness: the real app on a real database (a fresh PGlite from the migrated template,
// or on the Postgres at DATABASE_URL a database of its own copied from the migrated template),
// listening on a loopback port, with helpers to call it over real HTTP and to create users of
// every kind.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { inject } from 'vitest';
import { buildApp, type BuiltApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps, type Deps } from '../src/deps.js';
import { startEmbeddedServer, type EmbeddedServer } from '../src/platform/db/pglite-server.js';
import type { AccountType, Role } from '../src/platform/security/identity.rules.js';
import { testEnv } from './env.js';
import { createDatabase, databaseUrl, dropDatabase, dropSchema } from './schema.js';

export interface TestApp extends BuiltApp {
  deps: Deps;
  /** PostgreSQL: the schema this app's objects live in (another node can share it). */
  schema: string | undefined;
  /** PostgreSQL: the URL of this app's database (DATABASE_URL names the server's default one). */
  databaseUrl: string | undefined;
  url: string;
  /** Calls the running server over HTTP. `body` objects are sent as JSON. */
  api<T = any>(method: string, path: string, opts?: ApiOptions): Promise<ApiResponse<T>>;
  close(): Promise<void>;
  /** PostgreSQL: drops the database (or schema) this app made; `close` does it for a first node. */
  dropDatabase(): Promise<void>;
}

export interface ApiOptions {
  body?: unknown;
  token?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export const isPostgres = () => Boolean(process.env.DATABASE_URL);

export interface TestAppOptions {
  /** PostgreSQL only: a second node on the same database as this app (it leaves the database to
   * the first node to drop). */
  sameDatabaseAs?: TestApp;
  /** The suggestions' clock (createDeps' `clock`): a test moves it instead of waiting. */
  clock?: () => Date;
  /** The app's logger (createDeps' `log`): a test that reads what is logged gives its own. */
  log?: Logger;
}

export async function createTestApp(
  env: Record<string, string | undefined> = {},
  opts: TestAppOptions = {},
): Promise<TestApp> {
  const shared = opts.sameDatabaseAs;
  if (shared && !shared.schema)
    throw new Error(
      'a second node needs PostgreSQL (DATABASE_URL): the embedded database serves one process',
    );
  // On PostgreSQL a database of its own, copied from the template global-setup migrated (unless
  // the test names its own database).
  const server = process.env.DATABASE_URL;
  const template = server && !('DATABASE_URL' in env) && !shared ? inject('postgresTemplate') : null;
  const database = template ? `t_${randomBytes(6).toString('hex')}` : undefined;
  if (template && database) await createDatabase(server!, database, template.database);
  const url = shared?.databaseUrl ?? (database ? databaseUrl(server!, database) : server);
  const schema =
    shared?.schema ?? template?.schema ?? (server ? `t_${randomBytes(6).toString('hex')}` : undefined);
  const config = loadConfig(
    testEnv({
      DATABASE_URL: url ?? 'memory://',
      DB_SCHEMA: schema,
      ...env,
    }),
  );
  // The template was migrated with pgvector: a database without it is migrated from scratch. (A
  // data directory that holds a database already, a restart's, opens as it is: pglite-server.ts.)
  const pgliteTemplate = env.PGVECTOR === 'off' ? null : inject('pgliteTemplate');
  const embedded =
    pgliteTemplate && config.database.url === 'memory://' ? await takeServer(pgliteTemplate) : undefined;
  const deps = await createDeps(config, {
    ...(embedded ? { embedded } : pgliteTemplate ? { loadFrom: pgliteTemplate } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.log ? { log: opts.log } : {}),
  });
  const built = await buildApp(deps);
  await built.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = built.app.server.address() as AddressInfo;
  const address = `http://127.0.0.1:${port}`;

  async function api<T>(method: string, path: string, opts: ApiOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.apiKey) headers['x-api-key'] = opts.apiKey;
    const res = await fetch(address + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  // Closed once, however often close is called (tracing.test.ts closes its app in a test and
  // again after all): a second close handed the embedded server back a second time, and two
  // later apps then shared it, the reset for one cutting the other's connections.
  let closed: Promise<void> | undefined;
  return {
    ...built,
    deps,
    schema,
    databaseUrl: server ? url : undefined,
    url: address,
    api,
    close() {
      closed ??= (async () => {
        await built.app.close();
        await deps.close();
        if (embedded) giveBackServer(embedded);
        if (!shared) await dropOwnDatabase(database, schema, env);
      })();
      return closed;
    },
    dropDatabase: () => dropOwnDatabase(database, schema, env),
  };
}

/** This test process's embedded servers, each being reset to the template for the next app:
 * starting a server (a worker thread loading PGlite) is most of what starting an app costs, and a
 * reset (a fresh PGlite from the tarball in the same thread) is a fraction of it. A reset that
 * failed leaves null, and the next app starts a server of its own. */
const idleServers: Promise<EmbeddedServer | null>[] = [];

async function takeServer(template: string): Promise<EmbeddedServer> {
  for (;;) {
    const idle = await idleServers.shift();
    if (idle === undefined) return startEmbeddedServer({ dataDir: null, loadFrom: template });
    // One that failed its reset (null), stopped or whose worker ended is left behind.
    if (idle && !idle.gone()) return idle;
  }
}

function giveBackServer(server: EmbeddedServer): void {
  idleServers.push(
    server.reset().then(
      () => server,
      async () => {
        await server.stop();
        return null;
      },
    ),
  );
}

/** What a first node made on PostgreSQL: its database copied from the template, or the schema it
 * made in the server's default database. */
async function dropOwnDatabase(
  database: string | undefined,
  schema: string | undefined,
  env: Record<string, string | undefined>,
): Promise<void> {
  const server = process.env.DATABASE_URL;
  if (!server) return;
  if (database) await dropDatabase(server, database);
  else if (schema && !('DATABASE_URL' in env)) await dropSchema(server, schema);
}

/** An app whose process can be stopped and started again on the same database (PGlite on a
 * temporary data directory, loaded from the migrated template at the first start; or the
 * PostgreSQL schema of the first app): `restart()` stops the running one and starts the next, as
 * often as asked; `close()` ends whichever runs and removes the database. */
export async function createRestartableApp(env: Record<string, string | undefined> = {}) {
  const dir = isPostgres() ? null : mkdtempSync(join(tmpdir(), 'ap-restart-'));
  const dbEnv = dir ? { ...env, DATA_DIR: dir, DATABASE_URL: undefined } : env;
  const first = await createTestApp(dbEnv);
  let running = first;
  return {
    first,
    /** `between` runs once the running app has stopped, before the next starts; `changed` are
     * variables the next one starts with over the first one's (a rotated JWT secret). */
    async restart(between?: () => void, changed: Record<string, string | undefined> = {}): Promise<TestApp> {
      await running.app.close();
      await running.deps.close();
      between?.();
      running = await createTestApp({ ...dbEnv, ...changed }, first.schema ? { sameDatabaseAs: first } : {});
      return running;
    },
    async close(): Promise<void> {
      if (running !== first) {
        await running.close();
        await first.dropDatabase();
      } else await first.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type IdentityKind = 'public' | 'core_primary' | 'developer' | 'npc' | 'cso';

export const IDENTITIES: Record<IdentityKind, { role: Role; accountType: AccountType }> = {
  public: { role: 'carbon', accountType: 'public' },
  core_primary: { role: 'carbon', accountType: 'core_primary' },
  developer: { role: 'silicon', accountType: 'developer' },
  npc: { role: 'silicon', accountType: 'npc' },
  cso: { role: 'cso', accountType: 'public' },
};

export interface TestUser {
  id: number;
  email: string;
  password: string;
  accessToken: string;
  refreshToken: string;
}

let counter = 0;
/** Creates a user of the given kind and signs them in (tokens issued by the real auth service). */
export async function createUser(
  t: TestApp,
  kind: IdentityKind = 'public',
  opts: { email?: string; password?: string; name?: string } = {},
): Promise<TestUser> {
  const email = opts.email ?? `user${++counter}-${randomBytes(3).toString('hex')}@example.test`;
  const password = opts.password ?? 'correct horse battery';
  const row = await t.deps.services.users.create({ email, password, name: opts.name, ...IDENTITIES[kind] });
  const tokens = await t.deps.services.auth.issue(row, 'web_portal');
  return { id: row.id, email, password, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken };
}

export { eventually } from './eventually.js';
export { connectSocket, closeSockets, type TestSocket, type RecordedEvent } from './socket-client.js';
