// The service a bench measures, in the bench's own process: its configuration (test mode, silent
// logs, the benches' token secret) under `env` (the bench's settings, its model server's and its
// database's, later keys winning), listening on a free port of 127.0.0.1.
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';

/** Starts the service; `close()` stops its HTTP server, then its dependencies. */
export async function startService(env: Record<string, string | undefined>) {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    ...env,
  });
  const deps = await createDeps(config);
  const { app } = await buildApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    deps,
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    close: async () => {
      await app.close();
      await deps.close();
    },
  };
}
