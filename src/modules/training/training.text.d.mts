/** No byte-order mark, NFC, line ends as `\n`, runs of other whitespace as one space, no space at
 * a line's ends, at most one blank line in a row, nothing around the whole. */
export declare function normaliseText(text: string): string;
/** At most `max` characters of `text` (a surrogate pair is never split), and whether it was cut. */
export declare function keepChars(text: string, max: number): { text: string; truncated: boolean };
