// A real process of ours as an operator runs it: its output recorded, waits on what it prints (a
// signal, not a sleep), lines written to its stdin, its exit code. The tests run the service and
// the CLI as `npm start` does, from this run's build of the current sources (`spawnService`,
// service-build.ts); the benches run TypeScript entries through tsx (`spawnTs`).
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { prepareCluster } from '../src/platform/db/cluster-dir.js';

export interface Child {
  pid: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves with the first match of `pattern` in the stream's output so far or to come; rejects
   * when the process exits without printing it (or after the failsafe). */
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr', opts?: { from?: number }): Promise<RegExpMatchArray>;
  /** Writes a line to stdin. */
  write(line: string): void;
  /** Closes stdin (end of input). */
  end(): void;
  kill(signal?: NodeJS.Signals): void;
  /** The exit code (a signal's death counts as 128 + its number's usual meaning: non-zero). */
  exited: Promise<number>;
}

/** Only what our processes read: a child never inherits the test process's DATABASE_URL etc. */
export function baseEnv(): Record<string, string> {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG'];
  return Object.fromEntries(keep.flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])));
}

/** Runs `node <build>/<entry>.js ...args` (entry: `main`, the service, or `cli`) with exactly
 * `env`, and Node's on-disk cache of compiled code: every child of the run after the first
 * compiles none of the modules again. The cache is the build's (it is keyed by each file's path,
 * and each run builds into a new directory), so it goes with it. Inside a test file only.
 *
 * V8 runs the embedded database's WebAssembly with its baseline compiler only
 * (`--liftoff-only`): a child lives for a few statements, and optimising PGlite's hot functions
 * for later (what V8 does by default, in background threads) cost a start about a third of its
 * CPU (a second), never paid back. The same code runs; only how V8 compiles it differs. */
export function spawnService(
  entry: 'main' | 'cli',
  args: string[],
  env: Record<string, string>,
  opts: { failsafeMs?: number } = {},
): Child {
  const dist = inject('serviceBuild');
  const argv = ['--liftoff-only', join(dist, `${entry}.js`), ...args];
  return spawnNode(argv, join(dist, '..', 'compile-cache'), env, opts);
}

/** Lays the suite's migrated template (global-setup.ts) into `dataDir` as its embedded database,
 * as the service lays a backup down (`cli restore`): a process started on it then opens a
 * migrated database as a restart does, instead of making the cluster and running every migration.
 * For the tests of what a running process does; the first start itself has its own
 * (data-dir.test.ts, cli.users.test.ts). PGlite lane only. */
export async function migratedDataDir(dataDir: string): Promise<string> {
  const template = inject('pgliteTemplate');
  if (!template) throw new Error('the migrated template is the PGlite lane’s (DATABASE_URL unset)');
  mkdirSync(dataDir, { recursive: true });
  await prepareCluster(join(dataDir, 'pglite'), { tarball: () => readFile(template), log: () => undefined });
  return dataDir;
}

/** Node's on-disk cache of compiled code for `spawnTs`, shared by every child of every run:
 * keyed by each file's path and checked against its content, so an edited file is compiled
 * afresh. */
const COMPILE_CACHE = join(tmpdir(), 'ap-node-compile-cache');

/** Runs `node --import tsx <entry> ...args` with exactly `env` (and Node's compile cache). */
export function spawnTs(
  entry: string,
  args: string[],
  env: Record<string, string>,
  opts: { failsafeMs?: number } = {},
): Child {
  return spawnNode(['--import', 'tsx', entry, ...args], COMPILE_CACHE, env, opts);
}

function spawnNode(
  argv: string[],
  compileCache: string,
  env: Record<string, string>,
  { failsafeMs = 90_000 }: { failsafeMs?: number },
): Child {
  const child = spawn(process.execPath, argv, {
    env: { NODE_COMPILE_CACHE: compileCache, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  const listeners = new Set<() => void>();
  let done = false;
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out.stdout += d;
    for (const l of [...listeners]) l();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    out.stderr += d;
    for (const l of [...listeners]) l();
  });
  const exited = new Promise<number>((resolve) =>
    child.on('close', (code) => {
      done = true;
      for (const l of [...listeners]) l();
      resolve(code ?? 1);
    }),
  );
  const failsafe = setTimeout(() => child.kill('SIGKILL'), failsafeMs);
  failsafe.unref();
  void exited.then(() => clearTimeout(failsafe));

  return {
    pid: child.pid!,
    get stdout() {
      return out.stdout;
    },
    get stderr() {
      return out.stderr;
    },
    waitFor(pattern, stream = 'stdout', { from = 0 } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out[stream].slice(from).match(pattern);
          if (m) {
            listeners.delete(check);
            resolve(m);
          } else if (done) {
            listeners.delete(check);
            reject(
              new Error(`exited without printing ${pattern}\nstdout: ${out.stdout}\nstderr: ${out.stderr}`),
            );
          }
        };
        listeners.add(check);
        check();
      });
    },
    write(line) {
      child.stdin.write(line + '\n');
    },
    end() {
      child.stdin.end();
    },
    kill(signal = 'SIGTERM') {
      child.kill(signal);
    },
    exited,
  };
}
