// The command line: operator commands on the database (each applies pending migrations first and
// prints one JSON object on stdout; logs go to stderr) and `chat`, a terminal chat against a
// running server. `--help` after any command says what it takes. A failure prints
// `{ "error", "code" }` on stdout and exits non-zero (2: bad usage, 1: anything else); `--verbose`
// also writes it as text on stderr (with the stack of an unexpected error). This file describes
// the commands, reads their options and says how a run ended (src/cli.ts, the process's entry,
// exits with that code); what they do is in commands.ts, loaded only when one runs, so that help
// and usage errors answer without loading the service.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { ClusterUnusableError } from '../platform/db/cluster-dir.js';
import { DataDirLockedError } from '../platform/db/lock.js';
import { ACCOUNT_TYPES, API_SCOPES, ROLES } from '../platform/security/identity.rules.js';
import { ApiError } from '../client/index.js';
import type { CommandName } from './commands.js';
import type { EmbeddedServer } from '../platform/db/pglite-server.js';
import { CliError, type Values } from './usage.js';

interface Description {
  summary: string;
  /** Usage line(s) after `npm run cli --`. */
  usage: string;
  /** One line per option, for --help. */
  details?: string;
  options: ParseArgsOptionsConfig;
}

const ID = { type: 'string' } as const;

const COMMANDS: Record<CommandName, Description> = {
  migrate: {
    summary: 'apply pending migrations; prints { applied }',
    usage: 'migrate',
    options: {},
  },
  'users create': {
    summary: 'create an account (email verified); prints { id, email, role, accountType }',
    usage: 'users create --email E --password P [--role R] [--account-type A] [--name N]',
    details: `--role ${ROLES.join('|')} (default carbon); --account-type ${ACCOUNT_TYPES.join('|')} (default: developer for silicon, else public)`,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
      'account-type': { type: 'string' },
      name: { type: 'string' },
    },
  },
  'users list': {
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
  },
  'users set-role': {
    summary: "change an account's role (and account type); prints its profile",
    usage: 'users set-role --id N --role R [--account-type A]',
    details: 'allowed pairs: carbon + public|core_primary, silicon + developer|npc, cso + public',
    options: { id: ID, role: { type: 'string' }, 'account-type': { type: 'string' } },
  },
  'api-keys create': {
    summary: 'create an API key; prints { id, key, scopes } (the key is shown once)',
    usage: 'api-keys create --name N --scopes SCOPE[,SCOPE…] [--user ID]',
    details: `scopes: ${API_SCOPES.join(', ')}; --user: the account the key belongs to (an mcp key acts as it)`,
    options: { name: { type: 'string' }, scopes: { type: 'string' }, user: ID },
  },
  'api-keys list': {
    summary: 'list API keys (never the keys themselves); prints { apiKeys }',
    usage: 'api-keys list',
    options: {},
  },
  'api-keys revoke': {
    summary: 'revoke an API key at once, on every node; prints { id, revoked: true }',
    usage: 'api-keys revoke --id N',
    options: { id: ID },
  },
  'memory reembed': {
    summary: "embed the memories the current embedding model has not; prints the embeddings' state",
    usage: 'memory reembed [--status | --watch]',
    details:
      'After a change of embedding model (EMBEDDING_MODEL, OFFLINE_EMBEDDING_MODEL, EMBEDDING_DIMENSIONS) a running ' +
      'service re-embeds in the background by itself. This command does the same work here (stop the service ' +
      'first on the embedded database), with progress on stderr; resumable. --status prints the state and exits; ' +
      '--watch prints it every 2 s while a running service re-embeds (PostgreSQL), until nothing is left.',
    options: { status: { type: 'boolean' }, watch: { type: 'boolean' } },
  },
  backup: {
    summary: 'write the embedded database (DATA_DIR) to one file; prints { backup, dataDir }',
    usage: 'backup --out FILE',
    details:
      "Stop the server first: the embedded database is one process's (DATA_DIR is locked while it runs). " +
      'PostgreSQL: use pg_dump, or export.',
    options: { out: { type: 'string' } },
  },
  restore: {
    summary: 'make DATA_DIR the database of a backup (then migrated); prints { restored, movedAside }',
    usage: 'restore --in FILE [--replace]',
    details: 'With the server stopped. --replace moves a database already in DATA_DIR aside (not deleted).',
    options: { in: { type: 'string' }, replace: { type: 'boolean' } },
  },
  export: {
    summary: 'write every row of this database to a file (JSON lines); prints { export, tables, sequences }',
    usage: 'export --out FILE',
    details:
      'One consistent snapshot. Embedded database: with the server stopped; PostgreSQL: also while it runs.',
    options: { out: { type: 'string' } },
  },
  import: {
    summary: 'read an export into this (empty) database; prints { import, tables, sequences }',
    usage: 'import --in FILE',
    details:
      'The target is migrated first and must hold no row; both sides run the same version. Embeddings of another ' +
      'kind (pgvector against none) are left out and every memory is queued to be embedded again.',
    options: { in: { type: 'string' } },
  },
  chat: {
    summary: 'chat with the assistant of a running server in this terminal',
    usage: 'chat [--url URL] [--email E] [--password P]',
    details:
      '--url defaults to PUBLIC_URL (http://127.0.0.1:3000); a missing email or password is asked for. ' +
      'Type a message and Enter; replies stream in; suggested replies are numbered: type the number to send one. ' +
      '/new starts a new conversation, /quit (or end of input) leaves.',
    options: { url: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' } },
  },
};

const GLOBAL = { help: { type: 'boolean', short: 'h' }, verbose: { type: 'boolean', short: 'v' } } as const;

const NAMES = Object.keys(COMMANDS) as CommandName[];

function help(prefix: string): string {
  const exact = NAMES.includes(prefix as CommandName) ? COMMANDS[prefix as CommandName] : undefined;
  if (exact)
    return [
      `npm run cli -- ${exact.usage}`,
      '',
      `  ${exact.summary}`,
      ...(exact.details ? [`  ${exact.details}`] : []),
      '',
      '  --help shows this; --verbose also writes errors as text on stderr',
    ].join('\n');
  const listed = NAMES.filter((name) => !prefix || name.startsWith(prefix + ' ')).map(
    (name) => COMMANDS[name],
  );
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

/** Where a run writes, and the environment its configuration is read from (the process's own when
 * run as `npm run cli`). */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
  /** Embedded database only: a running server of the configured data directory, used instead of
   * starting one (the tests keep one between the runs of a test). */
  embedded?: EmbeddedServer;
}

/** Runs one command line; resolves with the process's exit code (0, 1, or 2 for bad usage). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const words: string[] = [];
  for (const a of argv) {
    if (a.startsWith('-')) break;
    words.push(a);
  }
  const verbose = argv.includes('--verbose') || argv.includes('-v');
  const wantsHelp = argv.includes('--help') || argv.includes('-h') || words[0] === 'help';
  const named = words[0] === 'help' ? words.slice(1) : words;
  const command = NAMES.find((name) => name === named.slice(0, name.split(' ').length).join(' '));
  // The commands' module once a command has run: it knows the service's errors.
  let commands: typeof import('./commands.js') | undefined;
  try {
    if (wantsHelp || named.length === 0) {
      const prefix = command ?? named.join(' ');
      if (!command && prefix && !NAMES.some((name) => name.startsWith(prefix + ' ')))
        throw new CliError('usage', `unknown command: ${prefix}`, help(''));
      if (named.length === 0 && !wantsHelp) throw new CliError('usage', 'no command given', help(''));
      io.stdout.write(help(prefix) + '\n');
      return 0;
    }
    if (!command) {
      const group = NAMES.some((name) => name.startsWith(named[0] + ' ')) ? named[0]! : '';
      throw new CliError('usage', `unknown command: ${named.join(' ')} (try --help)`, help(group));
    }
    let values: Values;
    try {
      ({ values } = parseArgs({
        args: argv.slice(command.split(' ').length),
        options: { ...COMMANDS[command].options, ...GLOBAL },
        strict: true,
        allowPositionals: false,
      }));
    } catch (err) {
      throw new CliError('usage', (err as Error).message, help(command));
    }
    const config = loadConfig(io.env);
    commands = await import('./commands.js');
    const result = await commands.RUNS[command](values, config, io.embedded).catch((err: unknown) => {
      if (err instanceof CliError && err.code === 'usage') err.usage ??= help(command);
      throw err;
    });
    if (result !== undefined) io.stdout.write(JSON.stringify(result) + '\n');
    return 0;
  } catch (err) {
    return fail(err, verbose, io, commands);
  }
}

/** Prints the error once: JSON on stdout; text on stderr as well with --verbose. Returns the exit
 * code. */
function fail(
  err: unknown,
  verbose: boolean,
  io: CliIo,
  commands: typeof import('./commands.js') | undefined,
): number {
  let code = 'internal';
  let message: string;
  let text: string;
  const service = commands?.describeError(err);
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
  } else if (err instanceof ClusterUnusableError) {
    code = 'database_unusable';
    message = text = err.message;
  } else if (err instanceof ApiError) {
    code = err.code;
    message = err.problem.detail ?? err.message;
    text = `${code}: ${message}`;
  } else if (service) {
    ({ code, message, text } = service);
  } else {
    message = err instanceof Error ? err.message : String(err);
    text = err instanceof Error ? (err.stack ?? message) : message;
  }
  io.stdout.write(JSON.stringify({ error: message, code }) + '\n');
  if (verbose) io.stderr.write(text + '\n');
  return code === 'usage' ? 2 : 1;
}
