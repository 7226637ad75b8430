// The CLI for the CLI's test files, two ways: as an operator runs it (`npm run cli -- …`, a process
// of its own: its exit code and what it prints), and the same command line run in this process
// (cli/main.ts: the same code, without the second or two a process spends loading the service;
// on PGlite the runs of a test share one server of the data directory, where each would start its
// own). Each file gets its own data directory (PGlite) or schema (PostgreSQL), so the files run
// side by side.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { runCli } from '../src/cli/main.js';
import { startEmbeddedServer, type EmbeddedServer } from '../src/platform/db/pglite-server.js';
import { baseEnv, migratedDataDir, spawnService } from './child-process.js';
import { isPostgres } from './harness.js';

export interface Run {
  code: number;
  /** The last line of stdout as JSON (every command prints one object). */
  out: any;
  stdout: string;
  stderr: string;
}

export interface CliDatabase {
  dataDir: string;
  schema: string;
  env: Record<string, string>;
  /** Runs the CLI (its build, `node dist/cli.js`) with `args` on this file's database, stdin closed. */
  cli: (...args: string[]) => Promise<Run>;
  /** Runs the same command line in this process (no stdin). */
  run: (...args: string[]) => Promise<Run>;
}

/** The run's result, its last line of stdout read as JSON. */
function result(code: number, stdout: string, stderr: string): Run {
  let out: unknown;
  try {
    out = JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null');
  } catch {
    out = undefined;
  }
  return { code, out, stdout, stderr };
}

/** A data directory (or schema) for this test file's CLI runs, removed after the file. `migrated`:
 * on PGlite its database is the suite's migrated template (for a file whose first run is not a
 * test of the first migrate); else the first run makes it. */
export function cliDatabase({ migrated = false }: { migrated?: boolean } = {}): CliDatabase {
  const dataDir = mkdtempSync(join(tmpdir(), 'ap-cli-'));
  if (migrated && !isPostgres()) beforeAll(() => migratedDataDir(dataDir));
  const schema = `t_cli_${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    ...baseEnv(),
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    JWT_SECRET: 'cli-test-secret-cli-test-secret-cli-test-secret',
    ...(isPostgres() ? { DATABASE_URL: process.env.DATABASE_URL!, DB_SCHEMA: schema } : {}),
  };
  afterAll(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    if (isPostgres()) {
      const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await c.connect();
      await c.query(`drop schema if exists "${schema}" cascade`);
      await c.end();
    }
  });
  // PGlite: the server the runs of a test share, started by the first. It holds the data
  // directory's lock, so it is stopped before a process of its own opens the directory, and after
  // each test (a test may take the lock itself).
  let server: Promise<EmbeddedServer> | undefined;
  async function release() {
    const held = server;
    server = undefined;
    await (await held?.catch(() => undefined))?.stop();
  }
  afterEach(release);
  async function cli(...args: string[]): Promise<Run> {
    await release();
    const p = spawnService('cli', args, env);
    p.end();
    const code = await p.exited;
    return result(code, p.stdout, p.stderr);
  }
  async function run(...args: string[]): Promise<Run> {
    const out = { stdout: '', stderr: '' };
    if (!isPostgres()) server ??= startEmbeddedServer({ dataDir: join(dataDir, 'pglite') });
    const code = await runCli(args, {
      stdout: { write: (text: string) => (out.stdout += text) },
      stderr: { write: (text: string) => (out.stderr += text) },
      env,
      ...(server ? { embedded: await server } : {}),
    });
    return result(code, out.stdout, out.stderr);
  }
  return { dataDir, schema, env, cli, run };
}
