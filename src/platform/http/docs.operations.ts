// What the OpenAPI document says of each operation beyond its schemas: who may call it and what
// each of its answers means. Both come from the route itself, so they cannot drift from it: the
// security requirement from the same `config.auth` the sign-in hook enforces (`routeRequirement`),
// a success from the route's own words (its response schema's description, else its summary),
// and a refusal from the problem codes of its status, worded for the route's kind of caller.
import { STATUS_CODES } from 'node:http';
import type { FastifySchema, RouteOptions } from 'fastify';
import { z } from 'zod';
import { routeRequirement, type AuthRequirement } from './auth.js';
import { problemSchema, statusOf, type ProblemCode } from './problem.js';
import { noContent } from './types.js';

/** When each problem code is answered (contract: "Errors"); a new code does not compile without one. */
const MEANING: Record<ProblemCode, string> = {
  validation_failed:
    'when the body, query or path parameters are not valid, `errors` listing every problem as `{ path, message }`',
  unauthenticated: 'without credentials, or with ones that are malformed, unknown or revoked',
  token_expired: 'when the access token has expired: refresh it and retry',
  invalid_credentials: 'on a wrong email or password, the same whether the email exists or not',
  refresh_token_reused: 'when a rotated refresh token comes back, which revokes every token of its family',
  forbidden:
    "when the caller is signed in but not allowed: a zone, an admin rule, another user's data, a blocked region",
  not_found: 'when there is no such resource, or the caller may not know it exists',
  method_not_allowed: 'when the path does not take this method, `Allow` listing those it does',
  request_timeout: 'when the request does not arrive in time',
  conflict: 'when a unique value is taken (an email, a name) or an update is stale',
  immutable: 'when the resource is never changed, as the ground floor: publish a new version instead',
  not_eligible: 'when the instance named is not of the kind, or not in the place, the action needs',
  guard_not_satisfied: 'when a guard of the transition is not met, named in `guard` and `missing`',
  invalid_transition:
    'when the definition has no such transition: `from`, `to` and `allowed` say what it has',
  insufficient_funds: 'when the change would take the balance below 0, `balance` being the balance',
  insufficient_quantity: 'when removing more of an item than the user holds, `quantity` being what they hold',
  payload_too_large: 'when the upload or body is over the limit',
  uri_too_long: 'when the URL is over the limit',
  unsupported_media_type: 'when the upload or body type is not accepted',
  invalid_definition: 'when a machine or protocol definition does not validate, `errors` saying where',
  rate_limited: 'when over the rate limit, `Retry-After` saying when to try again',
  headers_too_large: 'when the request headers are over the limit',
  model_unavailable: 'when the model provider fails after retries',
  service_unavailable:
    'when this node cannot take the request now (shutting down, or no worker for it): retry',
  insufficient_storage: 'when the disk is full: nothing is stored',
  internal: 'on an unexpected error: the body holds no internals, the logs have the request id',
};

type CallerKind = 'public' | 'user' | 'admin' | 'key';

/** Who a refusal speaks to: a public route judges the credentials in its body (a password, a
 * refresh token, a one-time code), the others the access token or API key of the request. */
function callerKind(requirement: AuthRequirement): CallerKind {
  return typeof requirement === 'object' ? 'key' : requirement;
}

const UNAUTHENTICATED: Record<CallerKind, { codes: ProblemCode[]; unauthenticated: string }> = {
  public: {
    codes: ['invalid_credentials', 'refresh_token_reused', 'unauthenticated'],
    unauthenticated: 'when the token or code sent is unknown, expired or already used',
  },
  user: {
    codes: ['unauthenticated', 'token_expired'],
    unauthenticated: 'without an access token, or with one that is malformed, unknown or of an ended session',
  },
  admin: {
    codes: ['unauthenticated', 'token_expired'],
    unauthenticated: 'without an access token, or with one that is malformed, unknown or of an ended session',
  },
  key: {
    codes: ['unauthenticated', 'token_expired'],
    unauthenticated:
      'without an access token or an `X-API-Key`, or with a key that is unknown or revoked, or a bad access token',
  },
};

const FORBIDDEN: Record<CallerKind, string> = {
  public: MEANING.forbidden,
  user: MEANING.forbidden,
  admin: 'when the caller is not an administrator, or an admin rule refuses the change',
  key: 'when the access token is not an administrator’s, or the API key lacks the scope this route needs, named in `requiredScope`',
};

const CODES = Object.keys(MEANING) as ProblemCode[];

/** What a refusal of this status means on a route of this requirement: its codes, each with what
 * it means. */
function refusalDescription(status: number, requirement: AuthRequirement): string {
  const kind = callerKind(requirement);
  const meaning = (code: ProblemCode) =>
    code === 'unauthenticated'
      ? UNAUTHENTICATED[kind].unauthenticated
      : code === 'forbidden'
        ? FORBIDDEN[kind]
        : MEANING[code];
  const codes = status === 401 ? UNAUTHENTICATED[kind].codes : CODES.filter((c) => statusOf(c) === status);
  if (codes.length === 0)
    throw new Error(`No problem code answers ${status}: describe the answer or drop it from the route`);
  return `${STATUS_CODES[status]}: ${codes.map((c) => `\`${c}\` ${meaning(c)}`).join('; ')}`;
}

/** A route's security requirement: none for a public route, the bearer token or an `X-API-Key`
 * where a key is taken, else the document's default (the bearer token). */
function securityOf(requirement: AuthRequirement): FastifySchema['security'] {
  if (requirement === 'public') return [];
  if (typeof requirement === 'object') return [{ bearer: [] }, { apiKey: [] }];
  return undefined;
}

/** The route's own description of an answer: its response schema's (or, for a schema given per
 * content type, `{ description, content }`, its own), unless the schema is a shared one, whose
 * description says nothing of the route. */
function ownDescription(response: unknown): string | undefined {
  if (response === noContent || response === problemSchema) return undefined;
  if (response instanceof z.ZodType) return response.description;
  const described = response as { description?: unknown } | undefined;
  return typeof described?.description === 'string' ? described.description : undefined;
}

/** The operation as the document shows it: `jsonSchema` is the route's schema as JSON Schema (the
 * zod provider's transform of it), `route` the route with its zod schema and config. */
export function documentOperation(
  route: Pick<RouteOptions, 'url' | 'config' | 'schema'>,
  jsonSchema: FastifySchema,
): FastifySchema {
  if (jsonSchema.hide) return jsonSchema;
  const requirement = routeRequirement(route.url, (route.config as { auth?: AuthRequirement })?.auth);
  const source = route.schema ?? {};
  const sourceResponses = (source.response ?? {}) as Record<string, unknown>;
  const responses = Object.entries(jsonSchema.response ?? {}).map(([code, json]) => {
    const status = Number(code);
    const own = ownDescription(sourceResponses[code]);
    const description = own
      ? `${STATUS_CODES[status]}: ${own}`
      : status < 400
        ? [STATUS_CODES[status], source.summary ?? source.description].filter(Boolean).join(': ')
        : refusalDescription(status, requirement);
    // @fastify/swagger takes a response's description from `description` beside a `$ref` (a named
    // schema), and from `x-response-description` on an inline schema, whose own `description`
    // stays the schema's.
    const key =
      typeof json === 'object' && json !== null && '$ref' in json ? 'description' : 'x-response-description';
    return [code, { ...(json as object), [key]: description }];
  });
  const security = securityOf(requirement);
  return {
    ...jsonSchema,
    ...(security ? { security } : {}),
    ...(jsonSchema.response ? { response: Object.fromEntries(responses) } : {}),
  };
}
