// Webhooks' pure rules: which endpoints an event goes to, the body sent, and the Standard Webhooks
// signature (https://www.standardwebhooks.com: `webhook-id`, `webhook-timestamp` in seconds,
// `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, the secret `whsec_<base64>`).
import { createHmac, randomBytes } from 'node:crypto';

export const ALL_EVENTS = '*';
export const TEST_EVENT_TYPE = 'webhook.test';
const SECRET_PREFIX = 'whsec_';

export interface EndpointFilter {
  eventTypes: readonly string[];
  /** Only this observer's events; null: every observer's. */
  observerId: number | null;
}

/** An event goes to an endpoint whose types name it (or `*`) and whose observer, if any, is the
 * event's own (`observerId`; observers below it are not included). */
export function matches(endpoint: EndpointFilter, event: { eventType: string; observerId: number }): boolean {
  const typed = endpoint.eventTypes.includes(ALL_EVENTS) || endpoint.eventTypes.includes(event.eventType);
  return typed && (endpoint.observerId === null || endpoint.observerId === event.observerId);
}

/** A new signing secret: `whsec_` and 32 random bytes in base64. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** `v1,<signature>` of one delivery attempt. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The headers of one attempt: the delivery's id (the same at every retry, for the receiver's
 * deduplication), the attempt's time and its signature. */
export function signedHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'assistant-platform-webhooks',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': sign(secret, id, timestampSeconds, body),
  };
}

/** The body of a delivery: `{ type, timestamp, data }`. */
export function payload(type: string, timestamp: string, data: unknown): string {
  return JSON.stringify({ type, timestamp, data });
}

/** What an attempt's outcome makes of the delivery: done, failed for good, or to be retried. */
export function attemptOutcome(
  result: { status: number } | { error: string; retryable: boolean },
  finalAttempt: boolean,
): 'succeeded' | 'failed' | 'retry' {
  if ('status' in result && result.status >= 200 && result.status < 300) return 'succeeded';
  if ('retryable' in result && !result.retryable) return 'failed';
  return finalAttempt ? 'failed' : 'retry';
}
