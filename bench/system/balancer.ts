// The load balancer in front of the nodes, as the load generator sees it: each request goes to
// the next node in turn; a node that refuses connections is taken out (never the last one), as a
// balancer's passive health check does, and probed every second until it answers again. The
// request that met the failure is an error (it is not retried: a client would see it), and the
// time from the first failure to the first answer from another node is the switch's length.
import type { Stats } from './stats.js';

export interface RequestOptions {
  token?: string;
  apiKey?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Expected status (default: any 2xx). */
  expect?: number;
  timeoutMs?: number;
}

export class HttpError extends Error {}

export class Balancer {
  private next = 0;
  readonly down = new Set<number>();
  /** When a node was first seen failing, and when another node answered after that. */
  failedAt: number | undefined;
  servedAgainAt: number | undefined;

  constructor(
    readonly urls: string[],
    readonly stats: Stats,
  ) {}

  pick(): number {
    for (let k = 0; k < this.urls.length; k++) {
      const i = this.next++ % this.urls.length;
      if (!this.down.has(i)) return i;
    }
    return this.next++ % this.urls.length;
  }

  /** Takes node `i` out, unless it is the last one in. */
  markDown(i: number) {
    if (this.down.has(i) || this.down.size + 1 >= this.urls.length) return;
    this.down.add(i);
    this.failedAt ??= performance.now();
    const probe = setInterval(() => {
      fetch(`${this.urls[i]}/api/health`, { signal: AbortSignal.timeout(5000) }).then(
        (res) => {
          if (res.status !== 200) return;
          this.down.delete(i);
          clearInterval(probe);
        },
        () => undefined,
      );
    }, 1000);
  }

  /** One request, timed under `op`; resolves with the answer's JSON and headers, or undefined
   * when it failed (the failure is counted). */
  async request(op: string, method: string, path: string, o: RequestOptions = {}) {
    const node = this.pick();
    const t0 = performance.now();
    try {
      const res = await fetch(this.urls[node] + path, {
        method,
        headers: {
          ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
          ...(o.apiKey ? { 'x-api-key': o.apiKey } : {}),
          ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...o.headers,
        },
        body: o.body !== undefined ? JSON.stringify(o.body) : undefined,
        signal: AbortSignal.timeout(o.timeoutMs ?? 30_000),
      });
      const text = await res.text();
      const ms = performance.now() - t0;
      const ok = o.expect !== undefined ? res.status === o.expect : res.status >= 200 && res.status < 300;
      const json: any = text ? JSON.parse(text) : null;
      if (!ok) {
        this.stats.error(op, `${res.status} ${json?.code ?? ''}`.trim());
        return undefined;
      }
      this.stats.ok(op, ms);
      if (this.failedAt !== undefined && this.servedAgainAt === undefined && !this.down.has(node))
        this.servedAgainAt = performance.now();
      return { json, headers: res.headers, node };
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      const name = (err as Error).name;
      this.stats.error(op, cause ?? name ?? 'network');
      // Refused: nothing listens there any more. (A reset or a timeout may be an overloaded node
      // that still serves: it stays in.)
      if (cause === 'ECONNREFUSED') this.markDown(node);
      return undefined;
    }
  }

  /** The same, throwing on failure (seeding: a failure there stops the bench). */
  async must(op: string, method: string, path: string, o: RequestOptions = {}) {
    const r = await this.request(op, method, path, o);
    if (!r) throw new HttpError(`${op}: ${method} ${path} failed`);
    return r.json;
  }
}
