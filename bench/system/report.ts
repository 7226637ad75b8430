// The figures of a window of the run and the markdown the bench prints: per operation, per node,
// PostgreSQL, delivery, the node loss, and the targets with PASS / FAIL.
import { pct } from '../percentile.js';
import type { NodeSample } from './nodes.js';
import type { PgSample } from './postgres.js';
import type { StatsSnapshot } from './stats.js';

export interface Figures {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

/** What the load generator answers to `snapshot`. */
export interface LoadSnapshot {
  stats: StatsSnapshot;
  delivery: { observer: Figures; fanout: Figures; webhook: Figures; connected: number };
  loadgenLoop: { p99: number; max: number };
  switches: Switches | null;
}

export interface Switches {
  killedAtSecond: number;
  http: { failedAfter: number | null; servedAgainAfter: number | null };
  chat: { moved: number; reconnectedAfter: (number | null)[]; servedAfter: (number | null)[] };
  observers: { moved: number; reconnectedAfter: number[]; recovered: number };
}

export interface Verification {
  delivery: {
    sockets: {
      socket: number;
      observerId: number;
      node: number;
      expected: number;
      missing: number;
      recovered: number;
      duplicates: number;
    }[];
    webhooks: { observerId: number; expected: number; missing: number; duplicates: number }[];
  };
  acked: { memories: number; currency: number; events: number };
  lost: { memories: number; events: number; currency: { missing: number; duplicated: number } };
  webhookDeliveries: Record<string, number>;
  scheduledRuns: number;
}

export interface NodeFigures {
  name: string;
  killed: boolean;
  lagP99Worst: number;
  lagP99Median: number;
  lagMax: number;
  cpuPct: number;
  rssStartMb: number;
  rssEndMb: number;
  chatOverheadP50: number;
  chatOverheadP99: number;
  scrapeP99: number;
}

const MB = 1024 * 1024;

/** A node's figures over [from, to] (epoch ms) from its scrapes. */
export function nodeFigures(
  name: string,
  killed: boolean,
  all: NodeSample[],
  from: number,
  to: number,
): NodeFigures {
  const s = all.filter((x) => x.t > from && x.t <= to);
  const first = s[0];
  const last = s.at(-1);
  const lags = s.map((x) => x.lagP99Ms);
  return {
    name,
    killed,
    lagP99Worst: Math.max(...lags),
    lagP99Median: pct(lags, 50),
    lagMax: Math.max(...s.map((x) => x.lagMaxMs)),
    cpuPct:
      first && last && last !== first
        ? (100 * (last.cpuSeconds - first.cpuSeconds)) / ((last.t - first.t) / 1000)
        : NaN,
    rssStartMb: (first?.rssBytes ?? NaN) / MB,
    rssEndMb: (last?.rssBytes ?? NaN) / MB,
    chatOverheadP50: last?.chatOverheadP50Ms ?? NaN,
    chatOverheadP99: last?.chatOverheadP99Ms ?? NaN,
    scrapeP99: pct(
      s.map((x) => x.scrapeMs),
      99,
    ),
  };
}

export interface PgFigures {
  commitsPerSec: number;
  rollbacksPerSec: number;
  connectionsMean: number;
  connectionsMax: number;
  activeMax: number;
  idleInTransactionMax: number;
}

export function pgFigures(all: PgSample[], from: number, to: number): PgFigures {
  const s = all.filter((x) => x.t > from && x.t <= to);
  const a = s[0];
  const b = s.at(-1);
  const secs = a && b ? (b.t - a.t) / 1000 : NaN;
  return {
    commitsPerSec: a && b ? (b.xactCommit - a.xactCommit) / secs : NaN,
    rollbacksPerSec: a && b ? (b.xactRollback - a.xactRollback) / secs : NaN,
    connectionsMean: s.reduce((n, x) => n + x.connections, 0) / s.length,
    connectionsMax: Math.max(...s.map((x) => x.connections)),
    activeMax: Math.max(...s.map((x) => x.active)),
    idleInTransactionMax: Math.max(...s.map((x) => x.idleInTransaction)),
  };
}

const f = (x: number | null | undefined, d = 1) =>
  x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d);

/** The errors of a window outside [killAt, killAt + grace] (seconds of the load generator's clock). */
export function errorsOutsideLoss(s: StatsSnapshot, sw: Switches | null, grace: number): number {
  let n = 0;
  for (const op of Object.values(s.ops))
    for (const [second, count] of Object.entries(op.bySecond)) {
      const t = Number(second);
      if (!sw || t < Math.floor(sw.killedAtSecond) || t > sw.killedAtSecond + grace) n += count;
    }
  return n;
}

export function opsTable(s: StatsSnapshot, d: LoadSnapshot['delivery']): string[] {
  const rows = [
    '| operation | requests | rate /s | p50 ms | p99 ms | max ms | errors | errors by kind |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, o] of Object.entries(s.ops).sort(([a], [b]) => a.localeCompare(b))) {
    if (name.startsWith('seed.')) continue;
    const kinds = Object.entries(o.byKind)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ');
    rows.push(
      `| ${name} | ${o.count + o.errors} | ${f((o.count + o.errors) / s.seconds)} | ${f(o.p50)} | ${f(o.p99)} | ${f(o.max)} | ${o.errors} | ${kinds} |`,
    );
  }
  for (const [name, x] of [
    ['observer delivery (ingest sent → socket)', d.observer],
    ['observer delivery (event inserted → socket)', d.fanout],
    ['webhook delivery (ingest sent → receiver)', d.webhook],
  ] as const)
    rows.push(`| ${name} | ${x.n} | ${f(x.n / s.seconds)} | ${f(x.p50)} | ${f(x.p99)} | ${f(x.max)} | | |`);
  return rows;
}

export function nodesTable(nodes: NodeFigures[]): string[] {
  return [
    '| node | event-loop p99 ms (worst 5 s / median 5 s) | event-loop max ms | CPU % of a core | RSS MB after warm-up → end | chat overhead p50 / p99 ms (service) | /metrics answer p99 ms |',
    '|---|---|---|---|---|---|---|',
    ...nodes.map(
      (n) =>
        `| ${n.name}${n.killed ? ' (killed)' : ''} | ${f(n.lagP99Worst)} / ${f(n.lagP99Median)} | ${f(n.lagMax)} | ${f(n.cpuPct, 0)} | ${f(n.rssStartMb, 0)} → ${f(n.rssEndMb, 0)} | ${f(n.chatOverheadP50)} / ${f(n.chatOverheadP99)} | ${f(n.scrapeP99)} |`,
    ),
  ];
}

export function pgTable(p: PgFigures): string[] {
  return [
    '| PostgreSQL | commits/s (xact_commit) | rollbacks/s | connections mean / max | active max | idle in transaction max |',
    '|---|---|---|---|---|---|',
    `| bench database | ${f(p.commitsPerSec, 0)} | ${f(p.rollbacksPerSec, 1)} | ${f(p.connectionsMean, 0)} / ${p.connectionsMax} | ${p.activeMax} | ${p.idleInTransactionMax} |`,
  ];
}

export function deliveryTable(v: Verification): string[] {
  const rows = [
    '| receiver | observer | events acknowledged (each) | missing | recovered by the gap read after a reconnect | received twice (dropped) |',
    '|---|---|---|---|---|---|',
  ];
  const sum = (xs: number[]) => xs.reduce((m, x) => m + x, 0);
  for (const observerId of [...new Set(v.delivery.sockets.map((s) => s.observerId))]) {
    const ss = v.delivery.sockets.filter((s) => s.observerId === observerId);
    rows.push(
      `| ${ss.length} sockets | ${observerId} | ${ss[0]!.expected} | ${sum(ss.map((s) => s.missing))} | ${sum(ss.map((s) => s.recovered))} | ${sum(ss.map((s) => s.duplicates))} |`,
    );
    for (const s of ss.filter((x) => x.missing > 0))
      rows.push(
        `| socket ${s.socket} (node ${s.node} at the end) | ${observerId} | ${s.expected} | ${s.missing} | ${s.recovered} | ${s.duplicates} |`,
      );
  }
  for (const w of v.delivery.webhooks)
    rows.push(`| webhook | ${w.observerId} | ${w.expected} | ${w.missing} | | ${w.duplicates} |`);
  return rows;
}

export function lossTable(sw: Switches, failedInWindow: number): string[] {
  const max = (xs: (number | null)[]) =>
    xs.some((x) => x === null) ? NaN : Math.max(0, ...(xs as number[]));
  const p50 = (xs: (number | null)[]) =>
    pct(
      xs.filter((x): x is number => x !== null),
      50,
    );
  return [
    '| node loss (kill -9) | clients moved | p50 s after the kill | max s after the kill |',
    '|---|---|---|---|',
    `| HTTP: first failure / served by the other node | | ${f(sw.http.failedAfter, 2)} | ${f(sw.http.servedAgainAfter, 2)} |`,
    `| chat sockets reconnected | ${sw.chat.moved} | ${f(p50(sw.chat.reconnectedAfter), 2)} | ${f(max(sw.chat.reconnectedAfter), 2)} |`,
    `| chat: next turn answered on the other node (a turn lost in the kill sent again at once; else the client's pause first) | ${sw.chat.moved} | ${f(p50(sw.chat.servedAfter), 2)} | ${f(max(sw.chat.servedAfter), 2)} |`,
    `| observer sockets reconnected (then read the gap) | ${sw.observers.moved} | ${f(pct(sw.observers.reconnectedAfter, 50), 2)} | ${f(max(sw.observers.reconnectedAfter), 2)} |`,
    `| requests and turns failed in the 10 s after the kill | ${failedInWindow} | | |`,
  ];
}

export interface Target {
  name: string;
  value: string;
  pass: boolean;
}

export function targetsTable(ts: Target[]): string[] {
  return [
    '| target | measured | |',
    '|---|---|---|',
    ...ts.map((t) => `| ${t.name} | ${t.value} | ${t.pass ? 'PASS' : 'FAIL'} |`),
  ];
}

export { f as fmt };
