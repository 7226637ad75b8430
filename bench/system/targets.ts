// The targets, judged on a window's figures (and, at the end of a run, on the check of
// every acknowledged write and every delivery).
import {
  errorsOutsideLoss,
  fmt,
  type LoadSnapshot,
  type NodeFigures,
  type Target,
  type Verification,
} from './report.js';

/** Errors within this many seconds after a kill belong to the switch, not to the service. */
export const LOSS_GRACE_SECONDS = 10;

export function judge(
  w: LoadSnapshot,
  nodes: NodeFigures[],
  v: Verification | undefined,
  /** Whether the memory target applies: it is about the end of a whole run, not a ramp's step
   * (a minute in which a node's caches may still be filling). */
  { memory = true }: { memory?: boolean } = {},
): Target[] {
  const op = (name: string) => w.stats.ops[name];
  const p99 = (name: string) => op(name)?.p99 ?? NaN;
  const le = (x: number, limit: number) => Number.isFinite(x) && x <= limit;
  const t: Target[] = [];
  const errors = errorsOutsideLoss(w.stats, w.switches, LOSS_GRACE_SECONDS);
  t.push({
    name: w.switches ? `0 errors outside the ${LOSS_GRACE_SECONDS} s after the kill` : '0 errors',
    value: String(errors),
    pass: errors === 0,
  });
  if (v) {
    const missing = [...v.delivery.sockets, ...v.delivery.webhooks].reduce((m, r) => m + r.missing, 0);
    t.push({
      name: 'every ingested event delivered to every observer socket and webhook',
      value: `${missing} missing of ${v.acked.events} events × ${v.delivery.sockets.length} sockets + ${v.delivery.webhooks.length} webhooks`,
      pass: missing === 0,
    });
  }
  const overhead = Math.max(...nodes.map((n) => n.chatOverheadP99).filter(Number.isFinite));
  t.push({
    name: 'chat service-side overhead p99 ≤ 50 ms (worst node)',
    value: `${fmt(overhead)} ms`,
    pass: le(overhead, 50),
  });
  for (const [name, label, limit] of [
    ['memory.search', 'memory search p99 ≤ 50 ms', 50],
    ['ingest', 'ingest p99 ≤ 50 ms', 50],
    ['workflow.transition', 'workflow transition p99 ≤ 50 ms', 50],
  ] as const)
    t.push({ name: label, value: `${fmt(p99(name))} ms`, pass: le(p99(name), limit) });
  t.push({
    name: 'observer delivery p99 ≤ 250 ms',
    value: `${fmt(w.delivery.observer.p99)} ms`,
    pass: le(w.delivery.observer.p99, 250),
  });
  for (const n of nodes) {
    t.push({
      name: `${n.name}: event-loop delay p99 ≤ 25 ms (worst 5 s window)`,
      value: `${fmt(n.lagP99Worst)} ms`,
      pass: le(n.lagP99Worst, 25),
    });
    if (memory && !n.killed) {
      const growth = (100 * (n.rssEndMb - n.rssStartMb)) / n.rssStartMb;
      t.push({
        name: `${n.name}: RSS at the end within 10 % of after warm-up`,
        value: `${fmt(n.rssStartMb, 0)} → ${fmt(n.rssEndMb, 0)} MB (${growth >= 0 ? '+' : ''}${fmt(growth)} %)`,
        pass: le(Math.abs(growth), 10),
      });
    }
  }
  const sw = w.switches;
  if (sw) {
    const times = [sw.http.servedAgainAfter, ...sw.chat.reconnectedAfter, ...sw.observers.reconnectedAfter];
    const worst = times.some((x) => x === null) ? NaN : Math.max(0, ...(times as number[]));
    t.push({
      name: 'after the kill, every client served by the other node within 10 s',
      value: `${fmt(worst, 2)} s`,
      pass: le(worst, 10),
    });
  }
  if (v) {
    const lost = v.lost.memories + v.lost.events + v.lost.currency.missing + v.lost.currency.duplicated;
    t.push({
      name: '0 acknowledged writes lost (memories, currency changes, ingested events)',
      value: `${v.lost.memories} of ${v.acked.memories} memories, ${v.lost.currency.missing} of ${v.acked.currency} currency changes (${v.lost.currency.duplicated} applied twice), ${v.lost.events} of ${v.acked.events} events`,
      pass: lost === 0,
    });
  }
  return t;
}
