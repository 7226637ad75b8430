// Operator commands (contract: "Operations"): one JSON object on stdout, logs on stderr.
// Every command applies pending migrations first.
//   migrate
//   users create --email E --password P --role R --account-type A [--name N]
//   api-keys create --name N --scopes sync:read,sync:write,chat-platform:command
import { parseArgs } from 'node:util';
import pino from 'pino';
import { z } from 'zod';
import { ConfigError, loadConfig } from './config.js';
import { createDeps } from './deps.js';
import { openDatabase } from './platform/db/database.js';
import { DataDirLockedError } from './platform/db/lock.js';
import { migrate } from './platform/db/migrate.js';
import { AppError } from './platform/http/problem.js';
import { API_SCOPES } from './platform/security/identity.rules.js';
import { accountTypeSchema, roleSchema } from './modules/users/users.schemas.js';
import { emailSchema, passwordSchema, scopeSchema } from './modules/auth/auth.schemas.js';

const USAGE = `usage:
  npm run cli -- migrate
  npm run cli -- users create --email E --password P [--role R] [--account-type A] [--name N]
  npm run cli -- api-keys create --name N --scopes SCOPE[,SCOPE…]
scopes: ${API_SCOPES.join(', ')}`;

class UsageError extends Error {}

function out(value: unknown) {
  process.stdout.write(JSON.stringify(value) + '\n');
}

async function run(argv: string[]) {
  const config = loadConfig();
  const log = pino({ level: config.logLevel }, pino.destination(2));
  const [group, action] = argv;

  if (group === 'migrate') {
    const handle = await openDatabase({
      url: config.database.url,
      dataDir: config.dataDir,
      poolSize: 2,
      poolTimeoutMs: config.database.poolTimeoutMs,
      schema: config.database.schema,
    });
    try {
      out(await migrate(handle, { pgvector: config.database.pgvector }));
    } finally {
      await handle.close();
    }
    return;
  }

  const { values } = parseArgs({
    args: argv.slice(2),
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
      'account-type': { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
    },
    strict: true,
  });

  if (group === 'users' && action === 'create') {
    const input = z
      .object({
        email: emailSchema,
        password: passwordSchema,
        role: roleSchema.default('carbon'),
        accountType: accountTypeSchema.optional(),
        name: z.string().min(1).max(100).optional(),
      })
      .safeParse({
        email: values.email,
        password: values.password,
        role: values.role,
        accountType: values['account-type'],
        name: values.name,
      });
    if (!input.success)
      throw new UsageError(input.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('\n'));
    const role = input.data.role;
    const accountType = input.data.accountType ?? (role === 'silicon' ? 'developer' : 'public');
    const deps = await createDeps(config, { log, jobs: false });
    try {
      const u = await deps.services.users.create({
        email: input.data.email,
        password: input.data.password,
        name: input.data.name,
        role,
        accountType,
        emailVerified: true,
      });
      out({ id: u.id, email: u.email, role: u.role, accountType: u.account_type });
    } finally {
      await deps.close();
    }
    return;
  }

  if (group === 'api-keys' && action === 'create') {
    const input = z
      .object({ name: z.string().min(1).max(100), scopes: z.array(scopeSchema).min(1) })
      .safeParse({
        name: values.name,
        scopes: values.scopes
          ?.split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      });
    if (!input.success)
      throw new UsageError(input.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('\n'));
    const deps = await createDeps(config, { log, jobs: false });
    try {
      const k = await deps.services.auth.createApiKey(input.data.name, input.data.scopes, null);
      out({ id: k.id, key: k.key, scopes: k.scopes });
    } finally {
      await deps.close();
    }
    return;
  }

  throw new UsageError(`unknown command: ${argv.join(' ') || '(none)'}`);
}

run(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    let message: string;
    if (err instanceof UsageError) message = `${err.message}\n${USAGE}`;
    else if (err instanceof ConfigError || err instanceof DataDirLockedError) message = err.message;
    else if (err instanceof AppError) message = `${err.code}: ${err.message}`;
    else if (err instanceof TypeError && /parseArgs|Unknown option/i.test(err.message))
      message = `${err.message}\n${USAGE}`;
    else message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    process.stderr.write(message + '\n');
    out({ error: message.split('\n')[0] });
    process.exit(1);
  },
);
