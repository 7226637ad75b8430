// Normalisation of a document's text, in plain JavaScript so that the extraction thread
// (training.extract-worker.mjs) runs it beside unpdf and mammoth: on a 300-page document it costs
// a tenth of a second, which the service's event loop must not pay. training.rules.ts re-exports
// it (types in training.text.d.mts).

/** No byte-order mark, NFC, line ends as `\n`, runs of other whitespace as one space, no space at
 * a line's ends, at most one blank line in a row, nothing around the whole. */
export function normaliseText(text) {
  return text
    .replace(/^\uFEFF/, '')
    .normalize('NFC')
    .replace(/\r\n?/g, '\n')
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** At most `max` characters of `text` (a surrogate pair is never split), and whether it was cut. */
export function keepChars(text, max) {
  if (text.length <= max) return { text, truncated: false };
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return { text: text.slice(0, end), truncated: true };
}
