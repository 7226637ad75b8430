// How a bad configuration is reported (config.ts parses): every problem in plain words, with the
// value given, except that secrets show only their length and URLs hide their password.
import type { z } from 'zod';
import { redactUrl } from './platform/redact.js';

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid configuration (see "Configuration" in README.md):\n  ${problems.join('\n  ')}`);
  }
}

/** Variables whose value is never echoed back: a problem names their length instead. */
const SECRETS = new Set([
  'JWT_SECRET',
  'JWT_PREVIOUS_SECRETS',
  'MODEL_API_KEY',
  'CHAT_PLATFORM_BOT_TOKEN',
  'ADMIN_PASSWORD',
  'WEBHOOK_SECRET_KEY',
  'ISSUE_TRACKER_TOKEN',
  'TOOL_APPROVAL_SECRET',
  'METRICS_TOKEN',
]);

/** How a problem shows the value given: secrets by length, URLs without their password. */
export function shown(name: string, value: string | undefined): string {
  if (value === undefined) return `${name} (unset)`;
  if (SECRETS.has(name)) return `${name} (${value.length} characters)`;
  return `${name}=${JSON.stringify(redactUrl(value))}`;
}

/** Plain-words messages for the checks the schema makes (zod's defaults say "received NaN"). */
export const issueMessage: z.core.$ZodErrorMap = (iss) => {
  if (iss.code === 'invalid_type') {
    if (iss.expected === 'int') return 'must be a whole number';
    if (iss.expected === 'number') return 'must be a number';
  } else if (iss.code === 'too_small') {
    if (iss.origin === 'string') return `must be at least ${String(iss.minimum)} characters`;
    if (iss.origin === 'array') return `must list at least ${String(iss.minimum)}`;
    return `must be at least ${String(iss.minimum)}`;
  } else if (iss.code === 'too_big') {
    if (iss.origin === 'string') return `must be at most ${String(iss.maximum)} characters`;
    return `must be at most ${String(iss.maximum)}`;
  } else if (iss.code === 'invalid_value') {
    return `must be one of ${iss.values.map(String).join(', ')}`;
  } else if (iss.code === 'invalid_format') {
    if (iss.format === 'url') return 'must be a URL';
    if (iss.format === 'regex') return `must match ${String((iss as { pattern?: unknown }).pattern)}`;
  }
  return undefined;
};
