// Start to health: the time from spawning the service to its first 200 on /api/health, on an
// existing embedded data directory (migrated and seeded by a first start, not counted), for the
// built output (`node dist/main.js`, what `npm start` runs; `npm run build` first). Each start's
// wall time and the CPU time the process had used by then (/proc, its threads included: steadier
// than the wall clock on a busy host); the median of each. main.ts enables Node's compile cache,
// warm after the first start.
//
// Variants, alternated start by start on the same data directory so that they meet the same load:
// `built` (this checkout's dist/), `--against DIR` (another checkout's built dist/, e.g. the commit
// before a change, exported with `git archive` and built, its node_modules a link to these), and
// `--tsx` (the TypeScript sources through tsx, `npm run dev`'s loader).
// Usage: npx tsx bench/startup.ts [--runs 9] [--against DIR] [--tsx]
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { embeddedDataDir } from './embedded-dir.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '9' },
    against: { type: 'string' },
    tsx: { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const root = join(import.meta.dirname, '..');

/** Each variant: the directory it runs in and node's arguments. */
const variants: Record<string, { cwd: string; args: string[] }> = {
  built: { cwd: root, args: [join(root, 'dist/main.js')] },
};
if (values.against) {
  const other = resolve(values.against);
  variants.against = { cwd: other, args: [join(other, 'dist/main.js')] };
}
if (values.tsx) variants.tsx = { cwd: root, args: ['--import', 'tsx', join(root, 'src/main.ts')] };
for (const { args } of Object.values(variants))
  if (args[0]!.endsWith('.js') && !existsSync(args[0]!)) throw new Error(`no ${args[0]}: build it first`);

const { DATA_DIR } = embeddedDataDir();
const port = 39_000 + Math.floor(Math.random() * 1000);
const env = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  DATA_DIR,
  PORT: String(port),
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
  JWT_SECRET: 'bench-startup-secret-bench-startup-secret',
};

async function healthy(): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/api/health`)).status === 200;
  } catch {
    return false;
  }
}

/** CPU milliseconds (user + system, all threads) process `pid` has used. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in ticks of 10 ms
}

/** Milliseconds from spawn to the first healthy answer, and the CPU used by then; then SIGTERM
 * and wait for the exit. */
async function once({ cwd, args }: { cwd: string; args: string[] }): Promise<{ ms: number; cpu: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit'], cwd });
  let gone = false;
  const exited = new Promise((resolve) => child.once('exit', resolve)).then(() => (gone = true));
  while (!(await healthy())) {
    if (gone) throw new Error(`the service exited before it was healthy: ${args.join(' ')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const ms = performance.now() - started;
  const cpu = cpuMs(child.pid!);
  child.kill('SIGTERM');
  await exited;
  return { ms, cpu };
}

await once(variants.built!); // migrates and seeds the fresh directory: not counted
// One start of each unmeasured: every variant's compile cache is warm before the first count.
for (const variant of Object.values(variants)) await once(variant);
const times: Record<string, { ms: number; cpu: number }[]> = {};
for (let i = 0; i < runs; i++)
  for (const [name, variant] of Object.entries(variants)) (times[name] ??= []).push(await once(variant));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = (x: number) => (x / 1000).toFixed(2);
for (const [name, xs] of Object.entries(times)) {
  const wall = xs.map((x) => x.ms);
  const cpu = xs.map((x) => x.cpu);
  console.log(
    `${name}: wall median ${s(median(wall))} s (${wall.map(s).join(', ')}); CPU median ${s(median(cpu))} s (${cpu.map(s).join(', ')})`,
  );
}
