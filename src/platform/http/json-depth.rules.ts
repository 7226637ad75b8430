// How deeply a JSON text nests, read from its text before it is parsed: a body nested thousands
// of levels deep would overflow the stack of whatever walks it after parsing (the checks of
// unsafe text, the schemas), a 500. Strings are skipped, escapes included.

/** Arrays and objects inside one another at most, in any JSON body (REST, MCP, sync). */
export const MAX_JSON_DEPTH = 64;

/** Whether `text` nests deeper than `max` (stops reading at the first level past it). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
