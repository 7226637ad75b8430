// The system bench's flags (bench/system.ts), parsed once in the orchestrator and handed to the
// load generator's process as JSON: every part reads the same numbers.
import { parseArgs } from 'node:util';

export interface Options {
  seconds: number;
  warmupSeconds: number;
  users: number;
  memoriesPerUser: number;
  memoryChars: number;
  chatClients: number;
  /** Each chat client sends a turn every uniform [min, max] seconds (divided by the load). */
  turnMinSeconds: number;
  turnMaxSeconds: number;
  ingestRate: number;
  observerSockets: number;
  workflowRate: number;
  /** The whole mix's multiple of its base rates. */
  load: number;
  ramp: boolean;
  rampStepSeconds: number;
  rampFactor: number;
  rampMax: number;
  killNodeAt: number | undefined;
  firstTokenMs: number;
  tokensPerSecond: number;
  replyTokens: number;
  embedMs: number;
  embedDims: number;
  /** Registrations in flight while the users are made (the memories are written in bulk). */
  seedConcurrency: number;
  modelConcurrency: number;
  webhooks: boolean;
  databaseUrl: string;
  database: string;
  keep: boolean;
}

/** The event type the bench ingests (the receivers count these only). */
export const BENCH_EVENT = 'system_bench';

/** Base rates of the HTTP part of the mix, per second, at load 1. */
export const BASE_RATES = {
  'memory.search': 20,
  'memory.write': 10,
  'profile.read': 10,
  'inventory.read': 10,
  'currency.change': 5,
  suggestions: 2,
} as const;
export type HttpOp = keyof typeof BASE_RATES;

const USAGE = `npx tsx bench/system.ts [--seconds 600] [--small] [--users 1000] [--memories 500]
  [--chat-clients 300] [--ingest-rate 300] [--observers 50] [--workflow-rate 1] [--load 1]
  [--ramp [--step-seconds 60] [--ramp-factor 1.5] [--ramp-max 8]] [--kill-node-at <s>]
  [--first-token-ms 300] [--tokens-per-second 30] [--reply-tokens 40] [--embed-ms 20]
  [--embed-dims 256] [--model-concurrency 64] [--no-webhooks] [--warmup 30] [--seed-concurrency 8] [--keep]`;

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '600' },
      warmup: { type: 'string' },
      small: { type: 'boolean', default: false },
      users: { type: 'string' },
      memories: { type: 'string' },
      'memory-chars': { type: 'string', default: '300' },
      'chat-clients': { type: 'string' },
      'turn-min': { type: 'string', default: '15' },
      'turn-max': { type: 'string', default: '30' },
      'ingest-rate': { type: 'string' },
      observers: { type: 'string', default: '50' },
      'workflow-rate': { type: 'string', default: '1' },
      load: { type: 'string', default: '1' },
      ramp: { type: 'boolean', default: false },
      'step-seconds': { type: 'string', default: '60' },
      'ramp-factor': { type: 'string', default: '1.5' },
      'ramp-max': { type: 'string', default: '8' },
      'kill-node-at': { type: 'string' },
      'first-token-ms': { type: 'string', default: '300' },
      'tokens-per-second': { type: 'string', default: '30' },
      'reply-tokens': { type: 'string', default: '40' },
      'embed-ms': { type: 'string', default: '20' },
      'embed-dims': { type: 'string', default: '256' },
      'seed-concurrency': { type: 'string', default: '8' },
      'model-concurrency': { type: 'string', default: '64' },
      'no-webhooks': { type: 'boolean', default: false },
      'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
      database: { type: 'string', default: 'bench_system' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  // --small: a population and mix that seed in seconds, for trying the bench out.
  const small = values.small;
  const num = (v: string | undefined, dflt: number, smallDflt = dflt) =>
    v === undefined ? (small ? smallDflt : dflt) : Number(v);
  const o: Options = {
    seconds: num(values.seconds, 600),
    warmupSeconds: num(values.warmup, 30, 10),
    users: num(values.users, 1000, 40),
    memoriesPerUser: num(values.memories, 500, 25),
    memoryChars: num(values['memory-chars'], 300),
    chatClients: num(values['chat-clients'], 300, 300),
    turnMinSeconds: num(values['turn-min'], 15),
    turnMaxSeconds: num(values['turn-max'], 30),
    ingestRate: num(values['ingest-rate'], 300, 300),
    observerSockets: num(values.observers, 50),
    workflowRate: num(values['workflow-rate'], 1),
    load: num(values.load, 1),
    ramp: values.ramp,
    rampStepSeconds: num(values['step-seconds'], 60),
    rampFactor: num(values['ramp-factor'], 1.5),
    rampMax: num(values['ramp-max'], 8),
    killNodeAt: values['kill-node-at'] === undefined ? undefined : Number(values['kill-node-at']),
    firstTokenMs: num(values['first-token-ms'], 300),
    tokensPerSecond: num(values['tokens-per-second'], 30),
    replyTokens: num(values['reply-tokens'], 40),
    embedMs: num(values['embed-ms'], 20),
    embedDims: num(values['embed-dims'], 256),
    seedConcurrency: num(values['seed-concurrency'], 8),
    modelConcurrency: num(values['model-concurrency'], 64),
    webhooks: !values['no-webhooks'],
    databaseUrl: values['database-url'],
    database: values.database,
    keep: values.keep,
  };
  for (const [k, v] of Object.entries(o))
    if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`--${k}: not a number\n${USAGE}`);
  if (o.users < 2) throw new Error('--users: at least 2');
  return o;
}

/** The database URL of the bench's own database on the server of `databaseUrl`. */
export function benchDatabaseUrl(o: Pick<Options, 'databaseUrl' | 'database'>): string {
  const u = new URL(o.databaseUrl);
  u.pathname = `/${o.database}`;
  return u.toString();
}
