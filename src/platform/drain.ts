// A node's drain (SIGTERM in a rolling deploy): from `begin` on, new HTTP requests answer 503
// and new chat turns a chatError, while the requests and turns already running are counted so
// the shutdown can wait for the last one (up to SHUTDOWN_GRACE_MS; main.ts runs the steps).
import type { FastifyInstance } from 'fastify';
import { AppError } from './http/problem.js';

export class Drain {
  private running = 0;
  private draining = false;
  private readonly waiters = new Set<() => void>();

  /** Whether the node is draining (it takes no new work). */
  get active(): boolean {
    return this.draining;
  }

  /** How many requests and turns are running now. */
  get inFlight(): number {
    return this.running;
  }

  /** From now on the node takes no new work. */
  begin(): void {
    this.draining = true;
  }

  /** Counts one piece of work as running until `leave` (called once). Throws the 503 problem
   * once draining. */
  enter(): () => void {
    if (this.draining)
      throw new AppError('service_unavailable', 'This node is shutting down; retry (another node answers)');
    this.running++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.running--;
      if (this.running === 0) for (const w of [...this.waiters]) w();
    };
  }

  /** Runs `work` counted as running (refused with the 503 problem once draining). */
  async track<T>(work: () => Promise<T>): Promise<T> {
    const leave = this.enter();
    try {
      return await work();
    } finally {
      leave();
    }
  }

  /** Resolves true once nothing runs, or false after `ms` with work still running. */
  idle(ms: number): Promise<boolean> {
    if (this.running === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (settled: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(onIdle);
        resolve(settled);
      };
      const onIdle = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.waiters.add(onIdle);
    });
  }
}

/** Counts every HTTP request as running work; once draining, a new one answers 503 (the health
 * check too, so a balancer stops sending here) and asks for its connection to be closed. */
export function registerDrain(app: FastifyInstance, drain: Drain): void {
  app.addHook('onRequest', async (_req, reply) => {
    if (drain.active) void reply.header('connection', 'close');
    const leave = drain.enter();
    reply.raw.once('close', leave);
  });
}
