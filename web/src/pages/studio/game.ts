// The game page's pure rules (table-tested in game.test.ts): a relationship's flags as a line of
// text and back.

/** `name=yes, other=no` for the flags. */
export function flagsText(flags: Record<string, boolean>): string {
  return Object.entries(flags)
    .map(([k, v]) => `${k}=${v ? 'yes' : 'no'}`)
    .join(', ');
}

const YES = ['yes', 'true', 'y', '1'];
const NO = ['no', 'false', 'n', '0'];

/** The flags of a line `name=yes, other=no` (a bare name is yes), or what is wrong with it. */
export function flagsOf(text: string): { flags: Record<string, boolean> } | { error: string } {
  const flags: Record<string, boolean> = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, value = 'yes', ...rest] = part.split('=').map((s) => s.trim());
    const v = value.toLowerCase();
    if (!name || rest.length || !/^[\w.-]{1,50}$/.test(name) || (!YES.includes(v) && !NO.includes(v)))
      return { error: `“${part}” is not a flag: write name=yes or name=no.` };
    flags[name] = YES.includes(v);
  }
  return { flags };
}
