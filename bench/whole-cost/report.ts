// The whole-cost bench's markdown: each batch's figures per operation, then each code's medians
// (and, for an A/B, B's against A's).
import { pct } from '../percentile.js';
import type { Batch } from './measure.js';
import type { Kind } from './ops.js';

export interface Row {
  code: string;
  round: number;
  batch: Batch;
}

const NAMES: Record<Kind, string> = {
  chat: 'Chat turn (Socket.IO)',
  ingest: 'Ingest (POST /api/sync/ingest-event) watched',
  search: 'Memory search (GET /api/assistant/memory)',
};

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const perOp = (b: Batch) => ({
  service: b.cpu.service / b.ops,
  pglite: b.cpu.pglite / b.ops,
  pg: b.cpu.pgOurs / b.ops,
  shared: b.cpu.pgShared / b.ops,
  total: (b.cpu.service + b.cpu.pgOurs) / b.ops,
  delivery: b.deliveries > 0 ? (1000 * (b.cpu.service + b.cpu.pgOurs)) / b.deliveries : NaN,
  idle: (b.idleCpu.service + b.idleCpu.pgOurs) / b.ops,
});

const median = (xs: number[]) => pct(xs, 50);

export function report(
  rows: Row[],
  kinds: Kind[],
  pglite: boolean,
  codes: string[],
  deliveriesPerIngest: number,
) {
  const out: string[] = [];
  const pgCols = pglite
    ? ['of which the PGlite thread']
    : [
        'PostgreSQL ms/op (its backends)',
        'service + PostgreSQL ms/op',
        "PostgreSQL's shared processes ms/op",
      ];
  for (const kind of kinds) {
    const ingest = kind === 'ingest';
    out.push(`**${NAMES[kind]}${ingest ? ` by ${deliveriesPerIngest} receivers` : ''}**`, '');
    out.push(
      `| code | round | ops | service ms/op | ${pgCols.join(' | ')} |${ingest ? ' µs per delivery |' : ''} idle subtracted ms/op | counted s | waited s |`,
      `|${' --- |'.repeat(7 + pgCols.length + (ingest ? 1 : 0))}`,
    );
    for (const r of rows.filter((x) => x.batch.kind === kind)) {
      const b = r.batch;
      const p = perOp(b);
      const notes = [
        b.failed ? `${b.failed} failed` : '',
        b.missing ? `${b.missing} deliveries missing` : '',
        b.settled ? '' : 'not quiet by --settle-max',
      ].filter(Boolean);
      const cols = pglite ? [f(p.pglite)] : [f(p.pg), f(p.total), f(p.shared)];
      out.push(
        `| ${r.code} | ${r.round}${notes.length ? ` (${notes.join(', ')})` : ''} | ${b.ops} | ${f(p.service)} | ${cols.join(' | ')} |${ingest ? ` ${f(p.delivery, 0)} |` : ''} ${f(p.idle)} | ${f(b.countedMs / 1000, 1)} | ${f(b.waitedMs / 1000, 0)} |`,
      );
    }
    out.push('');
  }
  out.push(
    `**Medians per operation** (ms of CPU; ${pglite ? "the service's process, its PGlite thread among it" : 'service + PostgreSQL'})`,
    '',
  );
  const head = codes.map((c) => `${c}: service, ${pglite ? 'PGlite thread' : 'PostgreSQL'}, sum`);
  out.push(
    `| operation | ${head.join(' | ')} |${codes.length === 2 ? ` ${codes[1]} / ${codes[0]} (sum) |` : ''}`,
    `|${' --- |'.repeat(1 + codes.length + (codes.length === 2 ? 1 : 0))}`,
  );
  for (const kind of kinds) {
    const sums: number[] = [];
    const cells = codes.map((c) => {
      const ps = rows.filter((r) => r.code === c && r.batch.kind === kind).map((r) => perOp(r.batch));
      const svc = median(ps.map((p) => p.service));
      const db = median(ps.map((p) => (pglite ? p.pglite : p.pg)));
      const sum = median(ps.map((p) => (pglite ? p.service : p.total)));
      sums.push(sum);
      const delivery = kind === 'ingest' ? `; ${f(median(ps.map((p) => p.delivery)), 0)} µs a delivery` : '';
      return `${f(svc)}, ${f(db)}, ${f(sum)}${delivery}`;
    });
    const ratio = codes.length === 2 ? ` ${f(sums[1]! / sums[0]!)} |` : '';
    out.push(`| ${kind} | ${cells.join(' | ')} |${ratio}`);
  }
  out.push('');
  return out;
}
