// Prometheus metrics: request counts and latencies per route template (never the raw URL,
// which would explode the label set), chat turns' latency and the service's own share of it,
// plus Node's default process metrics. Read with the METRICS_TOKEN bearer when it is set, else
// only from this machine.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';
import { AppError } from './problem.js';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  // A chat turn, server side: the event received → its last response sent. Its overhead is that
  // time minus the turn's model calls (as model_calls records them): what the service itself
  // costs, the figure to watch when a model is fast. The summary's quantiles are this node's, over
  // the last 10 minutes.
  const chatTurns = new Histogram({
    name: 'chat_turn_duration_seconds',
    help: 'Chat turn latency, event received to last response sent, by event and outcome',
    labelNames: ['event', 'outcome'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const chatTurnOverhead = new Summary({
    name: 'chat_turn_overhead_seconds',
    help: "Answered chat turns' latency minus their model calls' time, by event",
    labelNames: ['event'] as const,
    percentiles: [0.5, 0.9, 0.99],
    maxAgeSeconds: 600,
    ageBuckets: 5,
    registers: [registry],
  });
  return {
    registry,
    requests,
    duration,
    chatTurnOverhead,
    /** A gauge read when /metrics is scraped (e.g. a cache's size, to tell it from a leak). */
    gauge(name: string, help: string, read: () => number) {
      // The latest reader counts (an app built again on the same dependencies).
      registry.removeSingleMetric(name);
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    },
    /** One chat turn: its latency and, when it was answered, its model calls' share of it (ms). */
    chatTurn(event: string, outcome: 'ok' | 'error', ms: number, modelMs: number) {
      chatTurns.observe({ event, outcome }, ms / 1000);
      if (outcome === 'ok') chatTurnOverhead.observe({ event }, Math.max(0, ms - modelMs) / 1000);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Whether a peer address is this machine's own (IPv4 127/8, IPv6 ::1, IPv4-mapped loopback). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** Who may read `/metrics`: with a token, a caller presenting it as a bearer; without one, only a
 * caller on this machine (the connection's own peer address: no forwarded header can claim it). */
export function metricsAllowed(
  token: string | undefined,
  authorization: string | undefined,
  peer: string | undefined,
) {
  if (token === undefined) return isLoopback(peer);
  const given = Buffer.from(authorization ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function registerMetrics(app: FastifyInstance, metrics: Metrics, token?: string) {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.duration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
  app.get('/metrics', { config: { auth: 'public' }, schema: { hide: true } }, async (req, reply) => {
    if (!metricsAllowed(token, req.headers.authorization, req.socket.remoteAddress))
      throw new AppError(
        'unauthenticated',
        token === undefined
          ? '/metrics answers only on this machine unless METRICS_TOKEN is set'
          : '/metrics needs the METRICS_TOKEN bearer token',
      );
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}
