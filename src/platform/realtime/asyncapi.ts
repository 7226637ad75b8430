// The AsyncAPI 3.0 document of the Socket.IO namespaces (`GET /api/asyncapi.json`), built from the
// same zod schemas as the typed event maps: each module describes its namespace's events
// (`EventDocs`, checked against its event map by the compiler), and this turns them into channels,
// messages and operations. The document describes the server: `send` is an event the server
// emits, `receive` one it listens to (with its acknowledgement as the operation's reply).
import { z } from 'zod';

/** One event: what it carries, in words and by example. */
export interface EventDoc<Example = unknown> {
  summary: string;
  description: string;
  payload: z.ZodType;
  example: Example;
}

/** A client → server event: its payload and the acknowledgement the server calls back with. */
export interface ClientEventDoc<Payload = unknown, Ack = unknown> extends EventDoc<Payload> {
  ack: { description: string; payload: z.ZodType; example: Ack };
}

type Fn = (...args: never[]) => void;

/** The docs of an event map's server → client events: one per event, its example typed as the
 * event's payload. */
export type ServerEventDocs<Events> = {
  [K in keyof Events]: EventDoc<Events[K] extends Fn ? Parameters<Events[K]>[0] : never>;
};

/** The docs of an event map's client → server events (payload, then the ack callback). */
export type ClientEventDocs<Events> = {
  [K in keyof Events]: Events[K] extends (payload: infer P, ack?: (answer: infer A) => void) => void
    ? ClientEventDoc<P, A>
    : never;
};

export interface NamespaceDoc {
  /** The Socket.IO namespace: `/` or `/observer`. */
  namespace: string;
  /** The channel's key in the document, e.g. `chat`. */
  key: string;
  title: string;
  description: string;
  /** The handshake's `auth` object (checked at connect; a refusal is `connect_error` with a
   * problem object as its data). */
  auth: z.ZodType;
  authExample: Record<string, unknown>;
  /** Server → client. */
  emits: Record<string, EventDoc>;
  /** Client → server. */
  receives: Record<string, ClientEventDoc>;
}

type Json = Record<string, unknown>;

/** zod → JSON Schema (draft-07, AsyncAPI's default schema format); named schemas (`.meta({ id })`)
 * go to components.schemas and are referenced. */
function schemaOf(schema: z.ZodType, io: 'input' | 'output', components: Json): Json {
  const out = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' }) as Json;
  const defs = (out.definitions ?? {}) as Record<string, Json>;
  delete out.definitions;
  delete out.$schema;
  for (const [name, def] of Object.entries(defs)) components[name] ??= tidy(def);
  return tidy(out);
}

/** Drops what only clutters a reader's view (the safe-integer bounds, the date-time regex) and
 * points references at components.schemas. */
function tidy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(tidy) as T;
  if (!value || typeof value !== 'object') return value;
  const o = { ...(value as Json) };
  if (o.format === 'date-time') delete o.pattern;
  if (o.minimum === -Number.MAX_SAFE_INTEGER) delete o.minimum;
  if (o.maximum === Number.MAX_SAFE_INTEGER) delete o.maximum;
  if (typeof o.$ref === 'string') o.$ref = o.$ref.replace('#/definitions/', '#/components/schemas/');
  for (const [k, v] of Object.entries(o)) if (k !== 'examples') o[k] = tidy(v);
  return o as T;
}

export interface AsyncApiInfo {
  title: string;
  version: string;
  description: string;
  /** The service's public base URL (its host and scheme make the server entry). */
  publicUrl: string;
}

export function asyncApiDocument(info: AsyncApiInfo, namespaces: NamespaceDoc[]): Json {
  const url = new URL(info.publicUrl);
  const schemas: Json = {};
  const channels: Json = {};
  const operations: Json = {};
  const message = (name: string, doc: EventDoc, io: 'input' | 'output', title = name) => ({
    name,
    title,
    summary: doc.summary,
    description: doc.description,
    contentType: 'application/json',
    payload: schemaOf(doc.payload, io, schemas),
    examples: [{ name: `${name} example`, payload: doc.example }],
  });

  for (const ns of namespaces) {
    const messages: Json = {};
    const ref = (m: string) => ({ $ref: `#/channels/${ns.key}/messages/${m}` });
    for (const [event, doc] of Object.entries(ns.emits)) {
      messages[event] = message(event, doc, 'output');
      operations[`${ns.key}.${event}`] = {
        action: 'send',
        channel: { $ref: `#/channels/${ns.key}` },
        title: event,
        summary: doc.summary,
        description: doc.description,
        messages: [ref(event)],
      };
    }
    for (const [event, doc] of Object.entries(ns.receives)) {
      messages[event] = message(event, doc, 'input');
      // The acknowledgement is the callback's argument, not an event of its own.
      messages[`${event}Ack`] = message(
        `${event}Ack`,
        { summary: `The acknowledgement of ${event}`, ...doc.ack },
        'output',
        `${event} acknowledgement`,
      );
      operations[`${ns.key}.${event}`] = {
        action: 'receive',
        channel: { $ref: `#/channels/${ns.key}` },
        title: event,
        summary: doc.summary,
        description: doc.description,
        messages: [ref(event)],
        reply: { channel: { $ref: `#/channels/${ns.key}` }, messages: [ref(`${event}Ack`)] },
      };
    }
    channels[ns.key] = {
      address: ns.namespace,
      title: ns.title,
      description: ns.description,
      messages,
      'x-socketio-handshake-auth': { schema: schemaOf(ns.auth, 'input', schemas), example: ns.authExample },
    };
  }

  return {
    asyncapi: '3.0.0',
    info: { title: info.title, version: info.version, description: info.description },
    defaultContentType: 'application/json',
    servers: {
      service: {
        host: url.host,
        protocol: url.protocol === 'https:' ? 'wss' : 'ws',
        pathname: '/socket.io',
        description:
          'Socket.IO 4 (Engine.IO 4) on the HTTP port; connect to a namespace (channel address) with ' +
          '`auth` as its handshake object.',
      },
    },
    channels,
    operations,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}

/** The events as Markdown, for the API reference's introduction (`/docs`). */
export function eventsMarkdown(namespaces: NamespaceDoc[]): string {
  const lines: string[] = [];
  for (const ns of namespaces) {
    lines.push(`### Socket.IO namespace \`${ns.namespace}\`: ${ns.title}`, '', ns.description, '');
    lines.push(`Handshake: \`auth: ${JSON.stringify(ns.authExample)}\``, '');
    lines.push('| event | direction | what it says |', '|---|---|---|');
    for (const [e, d] of Object.entries(ns.receives))
      lines.push(`| \`${e}\` | client → server (with ack) | ${d.summary} |`);
    for (const [e, d] of Object.entries(ns.emits))
      lines.push(`| \`${e}\` | server → client | ${d.summary} |`);
    lines.push('');
  }
  return lines.join('\n');
}
