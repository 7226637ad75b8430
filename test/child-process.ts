// A real process of ours (src/main.ts, src/cli.ts) as an operator runs it: its output recorded,
// waits on what it prints (a signal, not a sleep), lines written to its stdin, its exit code.
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

/** Node's on-disk cache of compiled code, shared by every child of every run: a process loading
 * the whole service compiles each unchanged module once, not once per process (the suite starts
 * dozens). Keyed by each file's content, so an edited file is compiled afresh. */
const COMPILE_CACHE = join(tmpdir(), 'ap-node-compile-cache');

/** Runs `node --import tsx <entry> ...args` with exactly `env` (and Node's compile cache). */
export function spawnTs(
  entry: string,
  args: string[],
  env: Record<string, string>,
  { failsafeMs = 90_000 }: { failsafeMs?: number } = {},
): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    env: { NODE_COMPILE_CACHE: COMPILE_CACHE, ...env },
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
