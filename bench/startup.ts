// Start to health: the time from spawning the service to its first 200 on /api/health, on an
// existing embedded data directory (migrated by a first start), for the built output
// (`node dist/main.js`, what `npm start` runs; `npm run build` first) against the TypeScript
// sources through tsx (`npm run dev`'s loader), alternated; each start's wall time and the CPU
// time the process had used by then (/proc, its threads included: steadier than the wall clock
// on a busy host). main.ts enables Node's compile cache for both, warm after the first start.
// Usage: npx tsx bench/startup.ts [--runs 6]
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { embeddedDataDir } from './embedded-dir.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '6' } } });
const runs = Number(values.runs);
const root = join(import.meta.dirname, '..');
if (!existsSync(join(root, 'dist/main.js'))) throw new Error('run `npm run build` first');

const variants = {
  built: [join(root, 'dist/main.js')],
  tsx: ['--import', 'tsx', join(root, 'src/main.ts')],
};
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
async function once(args: string[]): Promise<{ ms: number; cpu: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit'], cwd: root });
  let gone = false;
  const exited = new Promise((resolve) => child.once('exit', resolve)).then(() => (gone = true));
  while (!(await healthy())) {
    if (gone) throw new Error(`the service exited before it was healthy: ${args.join(' ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = performance.now() - started;
  const cpu = cpuMs(child.pid!);
  child.kill('SIGTERM');
  await exited;
  return { ms, cpu };
}

await once(variants.built); // migrates the fresh directory: not counted
const times: Record<string, { ms: number; cpu: number }[]> = { built: [], tsx: [] };
for (let i = 0; i < runs; i++)
  for (const [name, args] of Object.entries(variants)) times[name]!.push(await once(args));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = (x: number) => (x / 1000).toFixed(2);
for (const [name, xs] of Object.entries(times)) {
  const wall = xs.map((x) => x.ms);
  const cpu = xs.map((x) => x.cpu);
  console.log(
    `${name}: wall median ${s(median(wall))} s (${wall.map(s).join(', ')}); CPU median ${s(median(cpu))} s (${cpu.map(s).join(', ')})`,
  );
}
