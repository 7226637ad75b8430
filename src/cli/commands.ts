// What each command of the command line does (cli.ts describes them, parses their options and
// prints their results). Loaded only when a command runs, so that help and usage errors answer
// without loading the service. Each prints one JSON object: the value its run returns.
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Config } from '../config.js';
import { createDeps, type Deps } from '../deps.js';
import { openDatabase, DatabaseUnreachableError } from '../platform/db/database.js';
import type { EmbeddedServer } from '../platform/db/pglite-server.js';
import { migrate } from '../platform/db/migrate.js';
import { createLogger } from '../platform/logging.js';
import { AppError } from '../platform/http/problem.js';
import { accountTypeSchema, roleSchema, toProfile } from '../modules/users/index.js';
import { emailSchema, passwordSchema, scopeSchema } from '../modules/auth/index.js';
import { runChat } from './chat.js';
import { DATA_RUNS } from './data.js';
import { CliError, options, parse, type Values } from './usage.js';

/** A command: its options, the configuration, and (embedded database only) a running server to
 * use instead of starting one: the tests keep one between the runs of a file. */
type Run = (values: Values, config: Config, embedded?: EmbeddedServer) => Promise<unknown>;

/** Runs fn with the services (jobs off: the CLI runs no workers) and closes them after. */
async function withDeps<T>(
  config: Config,
  embedded: EmbeddedServer | undefined,
  fn: (deps: Deps) => Promise<T>,
): Promise<T> {
  const log = await createLogger({ level: config.logLevel, format: config.logFormat }, 2);
  const deps = await createDeps(config, { log, jobs: false, ...(embedded ? { embedded } : {}) });
  try {
    return await fn(deps);
  } finally {
    await deps.close();
  }
}

const positiveInt = z.coerce.number().int().positive();

export const RUNS = {
  ...DATA_RUNS,
  async migrate(_values, config, embedded) {
    const handle = await openDatabase({
      embedded,
      url: config.database.url,
      dataDir: config.dataDir,
      poolSize: 2,
      poolTimeoutMs: config.database.poolTimeoutMs,
      preparedStatements: config.database.preparedStatements,
      schema: config.database.schema,
    });
    try {
      return await migrate(handle, { pgvector: config.database.pgvector });
    } finally {
      await handle.close();
    }
  },

  async 'users create'(values, config, embedded) {
    const input = parse(
      z.object({
        email: emailSchema,
        password: passwordSchema,
        role: roleSchema.default('carbon'),
        accountType: accountTypeSchema.optional(),
        name: z.string().min(1).max(100).optional(),
      }),
      options(values, ['email', 'password', 'role', 'accountType', 'name']),
    );
    const accountType = input.accountType ?? (input.role === 'silicon' ? 'developer' : 'public');
    return withDeps(config, embedded, async (deps) => {
      const u = await deps.services.users.create({ ...input, accountType, emailVerified: true });
      return { id: u.id, email: u.email, role: u.role, accountType: u.account_type };
    });
  },

  async 'users list'(values, config, embedded) {
    const q = parse(
      z.object({
        q: z.string().max(200).optional(),
        role: roleSchema.optional(),
        accountType: accountTypeSchema.optional(),
        limit: z.coerce.number().int().min(1).max(100).default(20),
        offset: z.coerce.number().int().min(0).default(0),
      }),
      options(values, ['q', 'role', 'accountType', 'limit', 'offset']),
    );
    return withDeps(config, embedded, async (deps) => {
      const { rows, total } = await deps.services.users.list(q);
      return { users: rows.map(toProfile), total, limit: q.limit, offset: q.offset };
    });
  },

  async 'users set-role'(values, config, embedded) {
    const input = parse(
      z.object({ id: positiveInt, role: roleSchema, accountType: accountTypeSchema.optional() }),
      options(values, ['id', 'role', 'accountType']),
    );
    return withDeps(config, embedded, async (deps) =>
      toProfile(
        await deps.services.users.patch(input.id, { role: input.role, accountType: input.accountType }),
      ),
    );
  },

  async 'api-keys create'(values, config, embedded) {
    const input = parse(
      z.object({
        name: z.string().min(1).max(100),
        scopes: z.array(scopeSchema).min(1),
        user: positiveInt.optional(),
      }),
      {
        name: values.name,
        user: values.user,
        scopes: typeof values.scopes === 'string' ? values.scopes.split(',').map((s) => s.trim()) : undefined,
      },
    );
    return withDeps(config, embedded, async (deps) => {
      const k = await deps.services.auth.createApiKey(input.name, input.scopes, input.user ?? null);
      return { id: k.id, key: k.key, scopes: k.scopes, userId: input.user ?? null };
    });
  },

  async 'api-keys list'(_values, config, embedded) {
    return withDeps(config, embedded, async (deps) => ({ apiKeys: await deps.services.auth.listApiKeys() }));
  },

  async 'api-keys revoke'(values, config, embedded) {
    const { id } = parse(z.object({ id: positiveInt }), { id: values.id });
    return withDeps(config, embedded, async (deps) => {
      await deps.services.auth.revokeApiKey(id);
      return { id, revoked: true };
    });
  },

  async 'memory reembed'(values, config, embedded) {
    return withDeps(config, embedded, async (deps) => {
      const memory = deps.services.memory;
      if (values.status) return memory.embeddingStatus();
      const line = (s: Awaited<ReturnType<typeof memory.embeddingStatus>>) =>
        process.stderr.write(
          `${s.model}: ${s.current} of ${s.total} chunks embedded (${Math.round(s.progress * 100)} %), ${s.stale} to re-embed, ${s.pending} waiting\n`,
        );
      if (values.watch) {
        for (;;) {
          const s = await memory.embeddingStatus();
          line(s);
          if (s.stale === 0 && s.pending === 0) return s;
          await sleep(2000);
        }
      }
      line(await memory.embeddingStatus());
      let reported = 0;
      const reembedded = await memory.reembedHere((done) => {
        if (done - reported >= 1000) {
          reported = done;
          process.stderr.write(`${done} chunks embedded\n`);
        }
      });
      return { reembedded, ...(await memory.embeddingStatus()) };
    });
  },

  async chat(values, config) {
    const input = parse(
      z.object({
        url: z.url().default(config.publicUrl),
        email: z.string().optional(),
        password: z.string().optional(),
      }),
      options(values, ['url', 'email', 'password']),
    );
    try {
      await runChat(input, { input: process.stdin, output: process.stdout });
    } catch (err) {
      if (err instanceof TypeError && err.message === 'fetch failed')
        throw new CliError(
          'server_unreachable',
          `cannot reach the server at ${input.url}: start it (npm start), or give its address with --url`,
        );
      throw err;
    }
    return undefined;
  },
} satisfies Record<string, Run>;

export type CommandName = keyof typeof RUNS;

/** The code and text of the service's own errors a command can end with; undefined for others. */
export function describeError(err: unknown): { code: string; message: string; text: string } | undefined {
  if (err instanceof DatabaseUnreachableError)
    return { code: 'database_unreachable', message: err.message, text: err.message };
  if (err instanceof AppError) {
    const details = (err.extensions as { errors?: { path: string; message: string }[] }).errors;
    const message = details
      ? `${err.message}: ${details.map((e) => `${e.path} ${e.message}`).join('; ')}`
      : err.message;
    return { code: err.code, message, text: `${err.code}: ${message}` };
  }
  return undefined;
}
