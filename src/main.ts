// Process entry: loadConfig → createDeps → buildApp → listen; graceful shutdown on SIGINT/SIGTERM.
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createDeps } from './deps.js';
import { DataDirLockedError } from './platform/db/lock.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  let deps;
  try {
    deps = await createDeps(config);
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const { app } = await buildApp(deps);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.log.info({ signal }, 'shutting down');
    // Stop taking requests, let in-flight ones finish, then release the database.
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    try {
      await app.close();
      await deps.close();
      process.exit(0);
    } catch (err) {
      deps.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  if (config.services.includes('api')) {
    await app.listen({ port: config.port, host: config.host });
    deps.log.info(
      { url: config.publicUrl, database: deps.database.kind, docs: `${config.publicUrl}/docs` },
      'service ready',
    );
  } else {
    deps.log.info('worker ready (no HTTP API on this node)');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
