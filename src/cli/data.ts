// The commands that carry a whole database: `backup` and `restore` (the embedded database's data
// directory as one tarball) and `export` and `import` (every row, between any two databases:
// platform/db/transfer.ts). The embedded database is one process's: while the server runs, it
// holds DATA_DIR's lock and these commands stop with `data_dir_locked`; stop the server (a
// drain takes seconds), run the command, start it again. PostgreSQL can be exported while the
// service runs (one consistent snapshot); back it up with its own tools (pg_dump).
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import type { Config } from '../config.js';
import { openDatabase, type DatabaseHandle } from '../platform/db/database.js';
import { acquireDataDirLock } from '../platform/db/lock.js';
import { migrate } from '../platform/db/migrate.js';
import type { EmbeddedServer } from '../platform/db/pglite-server.js';
import { exportDatabase, importDatabase, TransferError } from '../platform/db/transfer.js';
import { CliError, options, parse, type Values } from './usage.js';

const fileOption = (name: string) =>
  z.object({ [name]: z.string().min(1, `--${name} FILE is required`) }) as z.ZodType<Record<string, string>>;

async function opened<T>(
  config: Config,
  embedded: EmbeddedServer | undefined,
  fn: (handle: DatabaseHandle) => Promise<T>,
  extra: { loadFrom?: string } = {},
): Promise<T> {
  const handle = await openDatabase({
    embedded,
    url: config.database.url,
    dataDir: config.dataDir,
    poolSize: 2,
    poolTimeoutMs: config.database.poolTimeoutMs,
    preparedStatements: config.database.preparedStatements,
    schema: config.database.schema,
    ...extra,
  });
  try {
    await migrate(handle, { pgvector: config.database.pgvector });
    return await fn(handle);
  } catch (err) {
    if (err instanceof TransferError) throw new CliError('transfer_refused', err.message);
    throw err;
  } finally {
    await handle.close();
  }
}

function refuseExisting(file: string): string {
  const path = resolve(file);
  if (existsSync(path)) throw new CliError('file_exists', `${path} exists already: name a new file`);
  mkdirSync(dirname(path), { recursive: true });
  return path;
}

function embeddedOnly(config: Config, command: string): void {
  if (config.database.url?.startsWith('postgres'))
    throw new CliError(
      'not_embedded',
      `${command} is for the embedded database; on PostgreSQL use pg_dump / pg_restore, or cli export / import`,
    );
}

export const DATA_RUNS = {
  async backup(values: Values, config: Config, embedded?: EmbeddedServer) {
    embeddedOnly(config, 'backup');
    const { out } = parse(fileOption('out'), options(values, ['out']));
    const path = refuseExisting(out!);
    return opened(config, embedded, async (handle) => {
      await handle.dumpTo!(path);
      return { backup: path, dataDir: resolve(config.dataDir) };
    });
  },

  async restore(values: Values, config: Config, embedded?: EmbeddedServer) {
    embeddedOnly(config, 'restore');
    const input = parse(
      z.object({ in: z.string().min(1, '--in FILE is required'), replace: z.boolean().default(false) }),
      options(values, ['in', 'replace']),
    );
    const file = resolve(input.in);
    if (!existsSync(file)) throw new CliError('file_missing', `${file} does not exist`);
    const dir = resolve(config.dataDir, 'pglite');
    let movedAside: string | undefined;
    if (!embedded && existsSync(join(dir, 'PG_VERSION'))) {
      if (!input.replace)
        throw new CliError(
          'data_dir_in_use',
          `${config.dataDir} holds a database already: add --replace (it is moved aside, not deleted), or set DATA_DIR to a new directory`,
        );
      movedAside = `${dir}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      const lock = acquireDataDirLock(dir); // a running server's directory is never moved
      renameSync(dir, movedAside);
      lock.release();
    }
    try {
      // A new cluster starts from the tarball (pglite-server.ts), then is migrated to this version.
      return await opened(
        config,
        embedded,
        async () => ({ restored: file, dataDir: resolve(config.dataDir), movedAside: movedAside ?? null }),
        { loadFrom: file },
      );
    } catch (err) {
      if (movedAside) {
        if (existsSync(dir) && readdirSync(dir).length) rmSync(dir, { recursive: true, force: true });
        renameSync(movedAside, dir);
      }
      throw err;
    }
  },

  async export(values: Values, config: Config, embedded?: EmbeddedServer) {
    const { out } = parse(fileOption('out'), options(values, ['out']));
    const path = refuseExisting(out!);
    return opened(config, embedded, async (handle) => ({
      export: path,
      ...(await exportDatabase(handle, path)),
    }));
  },

  async import(values: Values, config: Config, embedded?: EmbeddedServer) {
    const { in: file } = parse(fileOption('in'), options(values, ['in']));
    const path = resolve(file!);
    if (!existsSync(path)) throw new CliError('file_missing', `${path} does not exist`);
    return opened(config, embedded, async (handle) => ({
      import: path,
      ...(await importDatabase(handle, path)),
    }));
  },
};
