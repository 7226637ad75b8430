// A code under measurement: a checkout of the project (this one, or --a/--b) whose service runs
// as operators start it, `node --import tsx src/main.ts` from the checkout's own directory (its
// own node_modules), as a process (or, on PostgreSQL, two) of its own, on a database of its own
// (a PostgreSQL database made afresh, or an embedded data directory).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADMIN_EMAIL, ADMIN_PASSWORD, JWT_SECRET } from '../system/nodes.js';

export interface Node {
  pid: number;
  url: string;
  dataDir: string;
  output: () => string;
  exited: Promise<number>;
  kill: (signal: NodeJS.Signals) => void;
}

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

/** Starts the service of the checkout at `root` with `env` on top of the bench's settings;
 * resolves once /api/health answers 200. */
export async function startNode(root: string, name: string, env: Record<string, string>): Promise<Node> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `whole-cost-${name}-`));
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG'];
  // WHOLE_COST_CPU_PROFILE=<dir>: each service writes its CPU profile (whole life) there on exit.
  const profile = process.env.WHOLE_COST_CPU_PROFILE;
  const flags = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', join(resolve(root), 'src/main.ts')], {
    cwd: resolve(root),
    env: {
      ...Object.fromEntries(keep.flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : []))),
      NODE_COMPILE_CACHE: join(tmpdir(), 'ap-node-compile-cache'),
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
      // One client registers every user: the per-address sign-in limit is for people.
      AUTH_RATE_LIMIT: '1000000',
      CHAT_RATE_LIMIT: '1000000',
      // Every observer socket signs in as the one administrator (the limit is for people's devices).
      SOCKETS_PER_USER: '100000',
      MODEL_CONCURRENCY: '64',
      // Webhooks go to the bench's receiver on 127.0.0.1 (allowed only with NODE_ENV=test).
      SSRF_ALLOW_LOOPBACK_FOR_TESTS: 'true',
      WEBHOOK_RETRY_DELAY: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-20_000)));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out = (out + d).slice(-20_000)));
  const exited = new Promise<number>((ok) => child.on('close', (code) => ok(code ?? 1)));
  const url = `http://127.0.0.1:${port}`;
  let gone: number | undefined;
  void exited.then((code) => (gone = code));
  for (;;) {
    const res = await fetch(`${url}/api/health`).catch(() => undefined);
    if (res?.status === 200) break;
    if (gone !== undefined) throw new Error(`${name} (${root}) exited ${gone}: ${out}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    pid: child.pid!,
    url,
    dataDir,
    output: () => out,
    exited,
    kill: (signal) => child.kill(signal),
  };
}

/** SIGTERM (a graceful stop), SIGKILL after 20 s; its data directory removed. */
export async function stopNode(n: Node): Promise<void> {
  n.kill('SIGTERM');
  const t = setTimeout(() => n.kill('SIGKILL'), 20_000);
  await n.exited;
  clearTimeout(t);
  rmSync(n.dataDir, { recursive: true, force: true });
}
