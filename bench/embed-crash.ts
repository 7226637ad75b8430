// After a crash, how soon every memory is embedded (issue 42): the service (`src/main.ts`, a
// process of its own) on PostgreSQL with a remote embedding model (a local server answering each
// request after --model-ms, so batches are in flight), memories written by 8 writers; kill -9
// during the writes, start again, and the time from the restart (its first healthy answer) until
// no chunk waits for an embedding. --rounds times in a row on one database, as the probe did.
// Run: DATABASE_URL=postgres://… npx tsx bench/embed-crash.ts [--rounds 5] [--write-s 6]
//      [--give-up-s 130] [--src src] (--src: another tree's src/, e.g. an older commit's)
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { hashEmbedding } from '../src/platform/models/lexical-embedder.js';
import { dropSchema } from '../test/schema.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    'write-s': { type: 'string', default: '6' },
    'give-up-s': { type: 'string', default: '130' },
    'model-ms': { type: 'string', default: '300' },
    src: { type: 'string', default: 'src' },
  },
});
const url = process.env.DATABASE_URL;
if (!url) throw new Error('set DATABASE_URL (a PostgreSQL server)');
const schema = `crash_${randomBytes(4).toString('hex')}`;
const port = 20000 + Math.floor(Math.random() * 20000);
const base = `http://127.0.0.1:${port}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The embedding model: every request answered after a delay, so a kill finds batches in flight.
const model = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string[] | string };
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          model: 'bench-embed',
          data: inputs.map((t, index) => ({
            object: 'embedding',
            index,
            embedding: Array.from(hashEmbedding(t)),
          })),
          usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
        }),
      );
    }, Number(values['model-ms']));
  });
});
await new Promise<void>((ok) => model.listen(0, '127.0.0.1', ok));
const modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;

function startService(): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', resolve(values.src, 'main.ts')], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: url,
      DB_SCHEMA: schema,
      MODEL_BASE_URL: modelUrl,
      EMBEDDING_MODEL: 'bench-embed',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
      NODE_ENV: 'production',
      LOG_LEVEL: 'error',
      AUTH_RATE_LIMIT: '100000000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function healthy(): Promise<void> {
  for (;;) {
    try {
      if ((await fetch(`${base}/api/health`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
}

const db = new pg.Pool({ connectionString: url, max: 2 });
const waiting = async () =>
  Number((await db.query(`select count(*)::int as n from "${schema}".memory_embed_queue`)).rows[0].n);
const chunks = async () =>
  Number((await db.query(`select count(*)::int as n from "${schema}".memory_chunks`)).rows[0].n);

const email = `crash-${randomBytes(3).toString('hex')}@example.test`;
const password = 'a long password for the bench';
let token = '';
let written = 0;

/** Writers store memories (two chunks each) until `stop()`; a refused or cut write is dropped. */
function write(): { stop: () => void; done: Promise<void> } {
  let stopped = false;
  const one = async () => {
    while (!stopped) {
      const n = ++written;
      const content = `Memory ${n}: ${'the keeper logged the tide and the gulls at the northern light. '.repeat(20)}`;
      await fetch(`${base}/api/assistant/memory`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ content, source: 'shared' }),
      }).catch(() => undefined);
    }
  };
  const done = Promise.all(Array.from({ length: 8 }, one)).then(() => undefined);
  return { stop: () => (stopped = true), done };
}

const rounds: {
  round: number;
  chunks: number;
  waitingAtRestart: number;
  embeddedAfterS: number | null;
  waitingAtGiveUp: number;
}[] = [];
let service = startService();
try {
  await healthy();
  const reg = await fetch(`${base}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  token = ((await reg.json()) as { accessToken: string }).accessToken;
  for (let round = 1; round <= Number(values.rounds); round++) {
    const writers = write();
    await sleep(Number(values['write-s']) * 1000);
    service.kill('SIGKILL');
    await new Promise((r) => service.once('exit', r));
    writers.stop();
    await writers.done;
    service = startService();
    await healthy();
    const restarted = Date.now();
    const waitingAtRestart = await waiting();
    let embeddedAfterS: number | null = null;
    let left = waitingAtRestart;
    while (Date.now() - restarted < Number(values['give-up-s']) * 1000) {
      left = await waiting();
      if (left === 0) {
        embeddedAfterS = (Date.now() - restarted) / 1000;
        break;
      }
      await sleep(250);
    }
    const r = { round, chunks: await chunks(), waitingAtRestart, embeddedAfterS, waitingAtGiveUp: left };
    rounds.push(r);
    console.log(JSON.stringify(r));
  }
} finally {
  service.kill('SIGKILL');
  await db.end();
  model.close();
  await dropSchema(url, schema);
}
console.log(JSON.stringify({ src: values.src, rounds }));
