// The whole-cost bench's flags (bench/whole-cost.ts).
import { parseArgs } from 'node:util';
import type { Kind } from './ops.js';

export interface Options {
  /** The checkouts measured: one (this one) or two (--a, --b), alternated. */
  codes: { label: string; root: string }[];
  db: 'postgres' | 'pglite';
  adminUrl: string | undefined;
  nodes: number;
  rounds: number;
  kinds: Kind[];
  turns: number;
  chatClients: number;
  ingests: number;
  observers: number;
  ingestConcurrency: number;
  webhook: boolean;
  searches: number;
  searchConcurrency: number;
  users: number;
  memories: number;
  seedConcurrency: number;
  quietMs: number;
  idleMs: number;
  settleMaxMs: number;
}

const USAGE = `npx tsx bench/whole-cost.ts [--a <checkout> --b <checkout>] [--db postgres|pglite] [--nodes 1|2]
  [--rounds 3] [--only chat,ingest,search] [--turns 100] [--chat-clients 10] [--ingests 200]
  [--observers 20] [--ingest-concurrency 10] [--webhook] [--searches 200] [--search-concurrency 8]
  [--users 20] [--memories 100] [--seed-concurrency 8] [--quiet-ms 1500] [--idle-ms 5000] [--settle-max 180]
PostgreSQL (the default when DATABASE_URL is set) makes a database of its own per checkout on
DATABASE_URL's server (bench_whole_a, bench_whole_b; dropped at the end).`;

export function parseOptions(argv: string[], here: string): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      a: { type: 'string' },
      b: { type: 'string' },
      db: { type: 'string' },
      nodes: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      only: { type: 'string', default: 'chat,ingest,search' },
      turns: { type: 'string', default: '100' },
      'chat-clients': { type: 'string', default: '10' },
      ingests: { type: 'string', default: '200' },
      observers: { type: 'string', default: '20' },
      'ingest-concurrency': { type: 'string', default: '10' },
      webhook: { type: 'boolean', default: false },
      searches: { type: 'string', default: '200' },
      'search-concurrency': { type: 'string', default: '8' },
      users: { type: 'string', default: '20' },
      memories: { type: 'string', default: '100' },
      'seed-concurrency': { type: 'string', default: '8' },
      'quiet-ms': { type: 'string' },
      'idle-ms': { type: 'string', default: '5000' },
      'settle-max': { type: 'string', default: '180' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if ((values.a === undefined) !== (values.b === undefined))
    throw new Error(`--a and --b go together\n${USAGE}`);
  const adminUrl = process.env.DATABASE_URL;
  const db = values.db ?? (adminUrl ? 'postgres' : 'pglite');
  if (db !== 'postgres' && db !== 'pglite') throw new Error(`--db: postgres or pglite\n${USAGE}`);
  if (db === 'postgres' && !adminUrl) throw new Error('--db postgres needs DATABASE_URL');
  const kinds = values.only.split(',').map((k) => k.trim());
  for (const k of kinds)
    if (k !== 'chat' && k !== 'ingest' && k !== 'search') throw new Error(`--only: ${k}?\n${USAGE}`);
  const o: Options = {
    codes:
      values.a !== undefined
        ? [
            { label: 'A', root: values.a },
            { label: 'B', root: values.b! },
          ]
        : [{ label: 'this checkout', root: here }],
    db,
    adminUrl,
    nodes: Number(values.nodes),
    rounds: Number(values.rounds),
    kinds: kinds as Kind[],
    turns: Number(values.turns),
    chatClients: Number(values['chat-clients']),
    ingests: Number(values.ingests),
    observers: Number(values.observers),
    ingestConcurrency: Number(values['ingest-concurrency']),
    webhook: values.webhook,
    searches: Number(values.searches),
    searchConcurrency: Number(values['search-concurrency']),
    users: Number(values.users),
    memories: Number(values.memories),
    seedConcurrency: Number(values['seed-concurrency']),
    // On PGlite quiet is the CPU alone: longer than a job queue's poll (1 s).
    quietMs: Number(values['quiet-ms'] ?? (db === 'pglite' ? 3000 : 1500)),
    idleMs: Number(values['idle-ms']),
    settleMaxMs: 1000 * Number(values['settle-max']),
  };
  for (const [k, v] of Object.entries(o))
    if (typeof v === 'number' && !(Number.isFinite(v) && v >= 0))
      throw new Error(`--${k}: a number\n${USAGE}`);
  if (o.nodes !== 1 && o.nodes !== 2) throw new Error('--nodes: 1 or 2');
  if (o.nodes === 2 && db === 'pglite') throw new Error('--nodes 2: PostgreSQL only (PGlite is one process)');
  if (o.users < o.chatClients) throw new Error('--users: at least --chat-clients (a user per chat socket)');
  return o;
}
