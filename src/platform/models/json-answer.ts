// Structured answers: models asked for JSON often wrap it in prose or a code fence.

/** The span from a model's answer's first `{` to its last `}`, parsed as JSON; undefined when
 * there is none or it does not parse. */
export function jsonObjectIn(text: string): unknown {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  if (!json) return undefined;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}
