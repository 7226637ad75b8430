// The command line: operator commands on the database (each applies pending migrations first and
// prints one JSON object on stdout; logs go to stderr) and `chat`, a terminal chat against a
// running server. `--help` after any command says what it takes. A failure prints
// `{ "error", "code" }` on stdout and exits non-zero (2: bad usage, 1: anything else); `--verbose`
// also writes it as text on stderr (with the stack of an unexpected error).
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { z } from 'zod';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createDeps, type Deps } from './deps.js';
import { openDatabase, DatabaseUnreachableError } from './platform/db/database.js';
import { DataDirLockedError } from './platform/db/lock.js';
import { migrate } from './platform/db/migrate.js';
import { createLogger } from './platform/logging.js';
import { AppError } from './platform/http/problem.js';
import { API_SCOPES } from './platform/security/identity.rules.js';
import { accountTypeSchema, roleSchema } from './modules/users/users.schemas.js';
import { toProfile } from './modules/users/index.js';
import { emailSchema, passwordSchema, scopeSchema } from './modules/auth/auth.schemas.js';
import { runChat } from './cli/chat.js';
import { ApiError } from './client/index.js';

class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** Usage errors exit 2 and carry the command's usage for --verbose. */
    readonly usage?: string,
  ) {
    super(message);
  }
}

type Values = Record<string, string | boolean | undefined>;

interface Command {
  /** The words that name it: `users list`. */
  name: string;
  summary: string;
  /** Usage line(s) after `npm run cli --`. */
  usage: string;
  /** One line per option, for --help. */
  details?: string;
  options: ParseArgsOptionsConfig;
  run(values: Values, config: Config): Promise<unknown>;
}

const ID = { type: 'string' } as const;

function parse<T>(schema: z.ZodType<T>, input: unknown, usage: string): T {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw new CliError(
    'usage',
    r.error.issues.map((i) => `--${String(i.path[0] ?? '?')}: ${i.message}`).join('; '),
    usage,
  );
}

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** zod paths are camelCase; the options the user typed are kebab-case. */
function options(values: Values, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, values[kebab(k)]]));
}

/** Runs fn with the services (jobs off: the CLI runs no workers) and closes them after. */
async function withDeps<T>(config: Config, fn: (deps: Deps) => Promise<T>): Promise<T> {
  const log = await createLogger({ level: config.logLevel, format: config.logFormat }, 2);
  const deps = await createDeps(config, { log, jobs: false });
  try {
    return await fn(deps);
  } finally {
    await deps.close();
  }
}

const positiveInt = z.coerce.number().int().positive();

const COMMANDS: Command[] = [
  {
    name: 'migrate',
    summary: 'apply pending migrations; prints { applied }',
    usage: 'migrate',
    options: {},
    async run(_values, config) {
      const handle = await openDatabase({
        url: config.database.url,
        dataDir: config.dataDir,
        poolSize: 2,
        poolTimeoutMs: config.database.poolTimeoutMs,
        schema: config.database.schema,
      });
      try {
        return await migrate(handle, { pgvector: config.database.pgvector });
      } finally {
        await handle.close();
      }
    },
  },
  {
    name: 'users create',
    summary: 'create an account (email verified); prints { id, email, role, accountType }',
    usage: 'users create --email E --password P [--role R] [--account-type A] [--name N]',
    details: `--role ${roleSchema.options.join('|')} (default carbon); --account-type ${accountTypeSchema.options.join('|')} (default: developer for silicon, else public)`,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
      'account-type': { type: 'string' },
      name: { type: 'string' },
    },
    async run(values, config) {
      const input = parse(
        z.object({
          email: emailSchema,
          password: passwordSchema,
          role: roleSchema.default('carbon'),
          accountType: accountTypeSchema.optional(),
          name: z.string().min(1).max(100).optional(),
        }),
        options(values, ['email', 'password', 'role', 'accountType', 'name']),
        help(this.name),
      );
      const accountType = input.accountType ?? (input.role === 'silicon' ? 'developer' : 'public');
      return withDeps(config, async (deps) => {
        const u = await deps.services.users.create({ ...input, accountType, emailVerified: true });
        return { id: u.id, email: u.email, role: u.role, accountType: u.account_type };
      });
    },
  },
  {
    name: 'users list',
    summary: 'list accounts, oldest first; prints { users, total, limit, offset }',
    usage: 'users list [--q TEXT] [--role R] [--account-type A] [--limit N] [--offset N]',
    details: '--q matches email or name (case-insensitive); --limit 1-100 (default 20)',
    options: {
      q: { type: 'string' },
      role: { type: 'string' },
      'account-type': { type: 'string' },
      limit: { type: 'string' },
      offset: { type: 'string' },
    },
    async run(values, config) {
      const q = parse(
        z.object({
          q: z.string().max(200).optional(),
          role: roleSchema.optional(),
          accountType: accountTypeSchema.optional(),
          limit: z.coerce.number().int().min(1).max(100).default(20),
          offset: z.coerce.number().int().min(0).default(0),
        }),
        options(values, ['q', 'role', 'accountType', 'limit', 'offset']),
        help(this.name),
      );
      return withDeps(config, async (deps) => {
        const { rows, total } = await deps.services.users.list(q);
        return { users: rows.map(toProfile), total, limit: q.limit, offset: q.offset };
      });
    },
  },
  {
    name: 'users set-role',
    summary: "change an account's role (and account type); prints its profile",
    usage: 'users set-role --id N --role R [--account-type A]',
    details: 'allowed pairs: carbon + public|core_primary, silicon + developer|npc, cso + public',
    options: { id: ID, role: { type: 'string' }, 'account-type': { type: 'string' } },
    async run(values, config) {
      const input = parse(
        z.object({ id: positiveInt, role: roleSchema, accountType: accountTypeSchema.optional() }),
        options(values, ['id', 'role', 'accountType']),
        help(this.name),
      );
      return withDeps(config, async (deps) =>
        toProfile(
          await deps.services.users.patch(input.id, { role: input.role, accountType: input.accountType }),
        ),
      );
    },
  },
  {
    name: 'api-keys create',
    summary: 'create an API key; prints { id, key, scopes } (the key is shown once)',
    usage: 'api-keys create --name N --scopes SCOPE[,SCOPE…] [--user ID]',
    details: `scopes: ${API_SCOPES.join(', ')}; --user: the account the key belongs to (an mcp key acts as it)`,
    options: { name: { type: 'string' }, scopes: { type: 'string' }, user: ID },
    async run(values, config) {
      const input = parse(
        z.object({
          name: z.string().min(1).max(100),
          scopes: z.array(scopeSchema).min(1),
          user: positiveInt.optional(),
        }),
        {
          name: values.name,
          user: values.user,
          scopes:
            typeof values.scopes === 'string' ? values.scopes.split(',').map((s) => s.trim()) : undefined,
        },
        help(this.name),
      );
      return withDeps(config, async (deps) => {
        const k = await deps.services.auth.createApiKey(input.name, input.scopes, input.user ?? null);
        return { id: k.id, key: k.key, scopes: k.scopes, userId: input.user ?? null };
      });
    },
  },
  {
    name: 'api-keys list',
    summary: 'list API keys (never the keys themselves); prints { apiKeys }',
    usage: 'api-keys list',
    options: {},
    async run(_values, config) {
      return withDeps(config, async (deps) => ({ apiKeys: await deps.services.auth.listApiKeys() }));
    },
  },
  {
    name: 'api-keys revoke',
    summary: 'revoke an API key at once, on every node; prints { id, revoked: true }',
    usage: 'api-keys revoke --id N',
    options: { id: ID },
    async run(values, config) {
      const { id } = parse(z.object({ id: positiveInt }), { id: values.id }, help(this.name));
      return withDeps(config, async (deps) => {
        await deps.services.auth.revokeApiKey(id);
        return { id, revoked: true };
      });
    },
  },
  {
    name: 'memory reembed',
    summary: "embed the memories the current embedding model has not; prints the embeddings' state",
    usage: 'memory reembed [--status | --watch]',
    details:
      'After a change of embedding model (EMBEDDING_MODEL, OFFLINE_EMBEDDING_MODEL, EMBEDDING_DIMENSIONS) a running ' +
      'service re-embeds in the background by itself. This command does the same work here (stop the service ' +
      'first on the embedded database), with progress on stderr; resumable. --status prints the state and exits; ' +
      '--watch prints it every 2 s while a running service re-embeds (PostgreSQL), until nothing is left.',
    options: { status: { type: 'boolean' }, watch: { type: 'boolean' } },
    async run(values, config) {
      return withDeps(config, async (deps) => {
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
        let last = 0;
        const reembedded = await memory.reembedHere((done) => {
          if (done - last >= 1000) {
            last = done;
            process.stderr.write(`${done} chunks embedded\n`);
          }
        });
        return { reembedded, ...(await memory.embeddingStatus()) };
      });
    },
  },
  {
    name: 'chat',
    summary: 'chat with the assistant of a running server in this terminal',
    usage: 'chat [--url URL] [--email E] [--password P]',
    details:
      '--url defaults to PUBLIC_URL (http://127.0.0.1:3000); a missing email or password is asked for. ' +
      'Type a message and Enter; replies stream in; suggested replies are numbered: type the number to send one. ' +
      '/new starts a new conversation, /quit (or end of input) leaves.',
    options: { url: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' } },
    async run(values, config) {
      const input = parse(
        z.object({
          url: z.url().default(config.publicUrl),
          email: z.string().optional(),
          password: z.string().optional(),
        }),
        options(values, ['url', 'email', 'password']),
        help(this.name),
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
  },
];

const GLOBAL = { help: { type: 'boolean', short: 'h' }, verbose: { type: 'boolean', short: 'v' } } as const;

function help(prefix: string): string {
  const exact = COMMANDS.find((c) => c.name === prefix);
  if (exact)
    return [
      `npm run cli -- ${exact.usage}`,
      '',
      `  ${exact.summary}`,
      ...(exact.details ? [`  ${exact.details}`] : []),
      '',
      '  --help shows this; --verbose also writes errors as text on stderr',
    ].join('\n');
  const listed = COMMANDS.filter((c) => !prefix || c.name.startsWith(prefix + ' '));
  return [
    'usage: npm run cli -- <command> [options]   (--help after a command for its options)',
    '',
    ...listed.map((c) => `  ${c.usage.padEnd(82)} ${c.summary}`),
    '',
    'Operator commands work on the database of this configuration (DATABASE_URL, DATA_DIR) and print one',
    'JSON object on stdout. A failure prints { "error", "code" } and exits 1 (2 for bad usage); add',
    '--verbose to see it as text on stderr too.',
  ].join('\n');
}

async function main(argv: string[]): Promise<void> {
  const words: string[] = [];
  for (const a of argv) {
    if (a.startsWith('-')) break;
    words.push(a);
  }
  const verbose = argv.includes('--verbose') || argv.includes('-v');
  const wantsHelp = argv.includes('--help') || argv.includes('-h') || words[0] === 'help';
  const named = words[0] === 'help' ? words.slice(1) : words;
  const command = COMMANDS.find((c) => c.name === named.slice(0, c.name.split(' ').length).join(' '));
  try {
    if (wantsHelp || named.length === 0) {
      const prefix = command?.name ?? named.join(' ');
      if (!command && prefix && !COMMANDS.some((c) => c.name.startsWith(prefix + ' ')))
        throw new CliError('usage', `unknown command: ${prefix}`, help(''));
      if (named.length === 0 && !wantsHelp) throw new CliError('usage', 'no command given', help(''));
      process.stdout.write(help(prefix) + '\n');
      return;
    }
    if (!command) {
      const group = COMMANDS.some((c) => c.name.startsWith(named[0] + ' ')) ? named[0]! : '';
      throw new CliError('usage', `unknown command: ${named.join(' ')} (try --help)`, help(group));
    }
    let values: Values;
    try {
      ({ values } = parseArgs({
        args: argv.slice(command.name.split(' ').length),
        options: { ...command.options, ...GLOBAL },
        strict: true,
        allowPositionals: false,
      }));
    } catch (err) {
      throw new CliError('usage', (err as Error).message, help(command.name));
    }
    const config = loadConfig();
    const result = await command.run(values, config);
    if (result !== undefined) process.stdout.write(JSON.stringify(result) + '\n');
  } catch (err) {
    fail(err, verbose);
  }
}

/** Prints the error once: JSON on stdout; text on stderr as well with --verbose. */
function fail(err: unknown, verbose: boolean): never {
  let code = 'internal';
  let message: string;
  let text: string;
  if (err instanceof CliError) {
    code = err.code;
    message = err.message;
    text = err.usage ? `${message}\n\n${err.usage}` : message;
  } else if (err instanceof ConfigError) {
    code = 'invalid_configuration';
    message = err.problems.join('; ');
    text = err.message;
  } else if (err instanceof DataDirLockedError) {
    code = 'database_in_use';
    message = text = err.message;
  } else if (err instanceof DatabaseUnreachableError) {
    code = 'database_unreachable';
    message = text = err.message;
  } else if (err instanceof ApiError) {
    code = err.code;
    message = err.problem.detail ?? err.message;
    text = `${code}: ${message}`;
  } else if (err instanceof AppError) {
    code = err.code;
    const details = (err.extensions as { errors?: { path: string; message: string }[] }).errors;
    message = details
      ? `${err.message}: ${details.map((e) => `${e.path} ${e.message}`).join('; ')}`
      : err.message;
    text = `${code}: ${message}`;
  } else {
    message = err instanceof Error ? err.message : String(err);
    text = err instanceof Error ? (err.stack ?? message) : message;
  }
  process.stdout.write(JSON.stringify({ error: message, code }) + '\n');
  if (verbose) process.stderr.write(text + '\n');
  process.exit(code === 'usage' ? 2 : 1);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => fail(err, true),
);
