// Start to health: the time from spawning the service to its first 200 on /api/health, on an
// existing embedded data directory (migrated by a first start), for the built output
// (`node dist/main.js`, what `npm start` runs; `npm run build` first) against the TypeScript
// sources through tsx (`npm run dev`'s loader), alternated. Node's compile cache is off for both
// (a fresh container's first start). Usage: npx tsx bench/startup.ts [--runs 6]
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
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

/** Milliseconds from spawn to the first healthy answer; then SIGTERM and wait for the exit. */
async function once(args: string[]): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit'], cwd: root });
  let gone = false;
  const exited = new Promise((resolve) => child.once('exit', resolve)).then(() => (gone = true));
  while (!(await healthy())) {
    if (gone) throw new Error(`the service exited before it was healthy: ${args.join(' ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = performance.now() - started;
  child.kill('SIGTERM');
  await exited;
  return ms;
}

await once(variants.built); // migrates the fresh directory: not counted
const times: Record<string, number[]> = { built: [], tsx: [] };
for (let i = 0; i < runs; i++)
  for (const [name, args] of Object.entries(variants)) times[name]!.push(await once(args));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, xs] of Object.entries(times))
  console.log(
    `${name}: median ${(median(xs) / 1000).toFixed(2)} s (${xs.map((x) => (x / 1000).toFixed(2)).join(', ')})`,
  );
