// OpenTelemetry traces (the official SDK), sent over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
// (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set: a span per HTTP request and per chat turn, and
// within a turn a span per stage that calls `traced` (model calls, memory retrieval, database
// transactions), the turn's token usage summed on its span. Unset, nothing of the SDK is loaded
// and `traced` is a direct call: tracing off costs one check.
//
// One tracer per process (the SDK's global provider and context manager): `startTracing` when
// the service starts, `stopTracing` (which sends what is left) when it closes.
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';

interface Active {
  tracer: Tracer;
  shutdown(): Promise<void>;
}
let active: Active | undefined;

/** Token usage summed for the enclosing span that asked for it (a chat turn). */
const usageSums = new AsyncLocalStorage<{ input: number; output: number }>();

export interface TracingOptions {
  /** The OTLP/HTTP traces URL (…/v1/traces); undefined: tracing stays off. */
  url: string | undefined;
  serviceName: string;
  version: string;
}

/** Starts exporting spans when a URL is configured (a second start is ignored). */
export async function startTracing(opts: TracingOptions): Promise<boolean> {
  if (!opts.url || active) return Boolean(active);
  const [{ TracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, hooks] =
    await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/context-async-hooks'),
    ]);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName, 'service.version': opts.version }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: opts.url }),
        scheduledDelayMillis: 1000,
      }),
    ],
  });
  const contextManager = new hooks.AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  active = {
    tracer: provider.getTracer(opts.serviceName, opts.version),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
  return true;
}

/** Sends the spans not yet sent and stops tracing. */
export async function stopTracing(): Promise<void> {
  const was = active;
  active = undefined;
  await was?.shutdown();
}

/** Runs `fn` in a span named `name` (a child of the span running now), ended when fn settles and
 * marked as an error when it throws. `sumUsage`: the token usage recorded inside (recordUsage)
 * is summed on this span. Tracing off: fn runs as it is. */
export function traced<T>(
  name: string,
  attributes: Attributes,
  fn: () => Promise<T>,
  { sumUsage = false }: { sumUsage?: boolean } = {},
): Promise<T> {
  if (!active) return fn();
  return active.tracer.startActiveSpan(name, { attributes }, async (span) => {
    const sums = sumUsage ? { input: 0, output: 0 } : undefined;
    try {
      return await (sums ? usageSums.run(sums, fn) : fn());
    } catch (err) {
      failed(span, err);
      throw err;
    } finally {
      if (sums)
        span.setAttributes({
          'gen_ai.usage.input_tokens': sums.input,
          'gen_ai.usage.output_tokens': sums.output,
        });
      span.end();
    }
  });
}

/** A model call's tokens: on the span running now, and summed for the enclosing turn. */
export function recordUsage(input: number, output: number): void {
  if (!active) return;
  trace
    .getActiveSpan()
    ?.setAttributes({ 'gen_ai.usage.input_tokens': input, 'gen_ai.usage.output_tokens': output });
  const sums = usageSums.getStore();
  if (sums) {
    sums.input += input;
    sums.output += output;
  }
}

function failed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** A span per HTTP request, named by its route (`GET /api/memories/:id`), with its status code. */
export function registerRequestSpans(app: FastifyInstance): void {
  const spans = new WeakMap<object, Span>();
  app.addHook('onRequest', async (req) => {
    if (!active) return;
    const route = req.routeOptions.url ?? 'unmatched';
    spans.set(
      req,
      active.tracer.startSpan(`${req.method} ${route}`, {
        kind: 2, // SpanKind.SERVER
        attributes: {
          'http.request.method': req.method,
          'http.route': route,
          'url.path': req.url.split('?')[0],
        },
      }),
    );
  });
  app.addHook('onResponse', async (req, reply) => {
    const span = spans.get(req);
    if (!span) return;
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
}
