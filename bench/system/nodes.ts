// The service nodes: each `node --import tsx src/main.ts` as an operator starts it (a process of
// its own, through test/child-process.ts), all on one PostgreSQL database, and what each says
// about itself on GET /metrics (prom-client's default process metrics, whose event-loop figures
// cover the time since the previous scrape, and chat_turn_overhead_seconds).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseEnv, spawnTs, type Child } from '../../test/child-process.js';

export const JWT_SECRET = 'system-bench-secret-system-bench-secret-0123456789';
export const ADMIN_EMAIL = 'admin@system-bench.test';
export const ADMIN_PASSWORD = 'system bench admin password';

export interface ServiceNode {
  name: string;
  url: string;
  child: Child;
  dataDir: string;
  alive: boolean;
}

/** One scrape of a node's /metrics. */
export interface NodeSample {
  t: number;
  lagP99Ms: number;
  lagMaxMs: number;
  cpuSeconds: number;
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
  /** The sketch index (the vector side without pgvector): a cache bounded by MEMORY_SKETCH_CACHE_MB. */
  sketchIndexBytes: number;
  chatOverheadP50Ms: number;
  chatOverheadP99Ms: number;
  /** How long the scrape took: an outside probe of the node's responsiveness. */
  scrapeMs: number;
}

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/** A port nothing listens on now (the system's pick). */
function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => ok(port));
    });
  });
}

/** Starts a node with `env` (its database, model server); resolves once it answers. */
export async function startNode(
  name: string,
  env: Record<string, string>,
  failsafeMs: number,
  spawned: (child: Child) => void = () => undefined,
): Promise<ServiceNode> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `system-bench-${name}-`));
  const child = spawnTs(
    MAIN,
    [],
    {
      ...baseEnv(),
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      DATA_DIR: dataDir,
      JWT_SECRET,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      ACCESS_TOKEN_TTL: '86400',
      // The load generator registers every user from one address, and is one client to the
      // service: the per-IP sign-in limit is for people.
      AUTH_RATE_LIMIT: '1000000',
      // Every observer socket signs in as the one administrator (the limit is for people's devices).
      SOCKETS_PER_USER: '100000',
      // Webhooks go to the load generator's receiver on 127.0.0.1 (allowed only with NODE_ENV=test).
      SSRF_ALLOW_LOOPBACK_FOR_TESTS: 'true',
      WEBHOOK_RETRY_DELAY: '1',
      SCHEDULER_INTERVAL: '5',
      ...env,
    },
    { failsafeMs },
  );
  spawned(child);
  // Ready once /api/health answers 200 (the "service ready" line is at info, and LOG_LEVEL=info
  // would log every request).
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    const res = await fetch(`${url}/api/health`).catch(() => undefined);
    if (res?.status === 200) break;
    const code = await Promise.race([child.exited, new Promise((r) => setTimeout(r, 250, 'wait'))]);
    if (code !== 'wait')
      throw new Error(`node ${name} exited ${String(code)}: ${child.stderr}${child.stdout}`);
  }
  return { name, url, child, dataDir, alive: true };
}

/** Stops a node: SIGTERM (a graceful stop), SIGKILL after 20 s. */
export async function stopNode(n: ServiceNode): Promise<void> {
  if (n.alive) {
    n.child.kill('SIGTERM');
    const t = setTimeout(() => n.child.kill('SIGKILL'), 20_000);
    await n.child.exited;
    clearTimeout(t);
    n.alive = false;
  }
  rmSync(n.dataDir, { recursive: true, force: true });
}

/** kill -9: the node dies mid-flight, as a machine that loses power. */
export async function killNode(n: ServiceNode): Promise<void> {
  n.child.kill('SIGKILL');
  n.alive = false;
  await n.child.exited;
}

/** The value of one series of Prometheus text (`name` or `name{labels}` as printed). */
function series(text: string, name: string): number {
  const i = text.indexOf(`\n${name} `);
  if (i < 0) return NaN;
  const end = text.indexOf('\n', i + 1);
  return Number(text.slice(i + name.length + 2, end < 0 ? undefined : end));
}

export async function scrape(n: ServiceNode): Promise<NodeSample | undefined> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${n.url}/metrics`, { signal: AbortSignal.timeout(5000) });
    const text = `\n${await res.text()}`;
    const q = (p: string) =>
      1000 * series(text, `chat_turn_overhead_seconds{quantile="${p}",event="chatMessage"}`);
    return {
      t: Date.now(),
      lagP99Ms: 1000 * series(text, 'nodejs_eventloop_lag_p99_seconds'),
      lagMaxMs: 1000 * series(text, 'nodejs_eventloop_lag_max_seconds'),
      cpuSeconds: series(text, 'process_cpu_seconds_total'),
      rssBytes: series(text, 'process_resident_memory_bytes'),
      heapUsedBytes: series(text, 'nodejs_heap_size_used_bytes'),
      heapTotalBytes: series(text, 'nodejs_heap_size_total_bytes'),
      externalBytes: series(text, 'nodejs_external_memory_bytes'),
      sketchIndexBytes: series(text, 'memory_sketch_index_bytes'),
      chatOverheadP50Ms: q('0.5'),
      chatOverheadP99Ms: q('0.99'),
      scrapeMs: performance.now() - t0,
    };
  } catch {
    return undefined;
  }
}
