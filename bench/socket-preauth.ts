// Socket.IO frames before authentication (issue 57): the server's resident memory while clients
// that never authenticate each send a CONNECT packet whose `auth.token` is 25 MB (under the
// engine's limit, 30 × BODY_LIMIT = 30 MiB). The real app on the embedded database in this
// process; the clients (bench/socket-preauth-client.mjs) in a process of their own, all at once,
// once over WebSocket and once over HTTP long-polling. RSS is sampled every 10 ms: before, at its
// peak, and once every client is done.
// Run: npx tsx bench/socket-preauth.ts [--clients 8] [--mb 25]
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { embeddedDataDir } from './embedded-dir.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '8' },
    mb: { type: 'string', default: '25' },
  },
});

const config = loadConfig({
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
  ...embeddedDataDir(),
});
const deps = await createDeps(config);
const { app } = await buildApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
const client = fileURLToPath(new URL('./socket-preauth-client.mjs', import.meta.url));
const mb = (bytes: number) => Math.round(bytes / 1e6);
try {
  const results = [];
  for (const transport of ['websocket', 'polling']) {
    const job = {
      url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
      clients: Number(values.clients),
      bytes: Number(values.mb) * 1e6,
      transport,
    };
    const before = process.memoryUsage.rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
    const { stdout } = await promisify(execFile)(process.execPath, [client, JSON.stringify(job)], {
      maxBuffer: 1024 * 1024,
    });
    clearInterval(sampler);
    const after = process.memoryUsage.rss();
    const { outcomes } = JSON.parse(stdout) as { outcomes: Record<string, number> };
    const line = {
      transport,
      clients: job.clients,
      mb: Number(values.mb),
      rssMb: [before, peak, after].map(mb),
      outcomes,
    };
    console.log(
      `${transport.padEnd(9)} ${job.clients} × ${values.mb} MB: RSS ${mb(before)} → peak ${mb(peak)} → after ${mb(after)} MB`,
      JSON.stringify(outcomes),
    );
    results.push(line);
  }
  console.log(JSON.stringify(results));
} finally {
  await app.close();
  await deps.close();
}
