// What the command line's parts share: its error, and reading options through a zod schema.
import { z } from 'zod';

export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** Usage errors exit 2 and carry the command's usage for --verbose (cli.ts adds it). */
    public usage?: string,
  ) {
    super(message);
  }
}

export type Values = Record<string, string | boolean | undefined>;

/** Parses what the user typed; a refusal is a usage error naming the options at fault. */
export function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw new CliError(
    'usage',
    r.error.issues.map((i) => `--${String(i.path[0] ?? '?')}: ${i.message}`).join('; '),
  );
}

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** zod paths are camelCase; the options the user typed are kebab-case. */
export function options(values: Values, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, values[kebab(k)]]));
}
