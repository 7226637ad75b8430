// Per-operation figures of the load generator: a count, an HDR histogram of latencies (Node's own,
// bounded memory however long the run) and the errors of each second, so errors inside the
// node-loss window can be told from the others. Snapshots are plain JSON (they cross processes).
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

export interface OpSnapshot {
  count: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
  /** Errors by the second (of the load generator's clock) they happened in. */
  bySecond: Record<number, number>;
  /** Errors by what failed (status and code, or the network error). */
  byKind: Record<string, number>;
}

export interface StatsSnapshot {
  seconds: number;
  ops: Record<string, OpSnapshot>;
}

/** A latency histogram in microseconds; figures in ms. */
export class Latency {
  private h: RecordableHistogram = createHistogram();
  private n = 0;
  record(ms: number) {
    this.h.record(Math.max(1, Math.round(ms * 1000)));
    this.n++;
  }
  get count() {
    return this.n;
  }
  percentile(p: number) {
    return this.n === 0 ? NaN : this.h.percentile(p) / 1000;
  }
  get max() {
    return this.n === 0 ? NaN : this.h.max / 1000;
  }
  reset() {
    this.h.reset();
    this.n = 0;
  }
}

class OpStats {
  latency = new Latency();
  errors = 0;
  bySecond: Record<number, number> = {};
  byKind: Record<string, number> = {};
}

export class Stats {
  private ops = new Map<string, OpStats>();
  private since = performance.now();
  constructor(private readonly runStart: number) {}

  private op(name: string) {
    let s = this.ops.get(name);
    if (!s) this.ops.set(name, (s = new OpStats()));
    return s;
  }
  ok(name: string, ms: number) {
    this.op(name).latency.record(ms);
  }
  error(name: string, what: string) {
    const s = this.op(name);
    s.errors++;
    s.byKind[what] = (s.byKind[what] ?? 0) + 1;
    const second = Math.floor((performance.now() - this.runStart) / 1000);
    s.bySecond[second] = (s.bySecond[second] ?? 0) + 1;
  }
  /** Times `fn`; a throw is an error named by its message (the caller's `what`). */
  async time<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
    const t0 = performance.now();
    try {
      const v = await fn();
      this.ok(name, performance.now() - t0);
      return v;
    } catch (err) {
      this.error(name, err instanceof Error ? err.message.slice(0, 120) : String(err));
      return undefined;
    }
  }
  snapshot(reset: boolean): StatsSnapshot {
    const ops: Record<string, OpSnapshot> = {};
    for (const [name, s] of this.ops) {
      ops[name] = {
        count: s.latency.count,
        errors: s.errors,
        p50: s.latency.percentile(50),
        p99: s.latency.percentile(99),
        max: s.latency.max,
        bySecond: s.bySecond,
        byKind: s.byKind,
      };
      if (reset) this.ops.set(name, new OpStats());
    }
    const seconds = (performance.now() - this.since) / 1000;
    if (reset) this.since = performance.now();
    return { seconds, ops };
  }
}
