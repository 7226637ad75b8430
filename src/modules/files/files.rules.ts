// Pure upload rules: which sniffed types are accepted, plain-text recognition, file names.
// The type is decided from the bytes, never from the client's declared type or file name.

/** Images the vision model takes, PDF, DOCX (issue 5; contract: "Errors" 415). Plain text
 * has no magic number and is recognised separately. */
export const ACCEPTED_SNIFFED_TYPES: readonly string[] = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
];

export const TEXT_TYPE = 'text/plain';

/** UTF-8 without NUL and without control characters other than tab, newlines and form feed. */
export function looksLikeText(data: Uint8Array): boolean {
  if (data.length === 0) return false;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return false;
  }
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text);
}

/** The stored type of an upload: the sniffed type when accepted, text/plain for text, else null
 * (415). `sniffed` is what the magic-number detector found, if anything. */
export function acceptedType(sniffed: string | undefined, data: Uint8Array): string | null {
  if (sniffed !== undefined) return ACCEPTED_SNIFFED_TYPES.includes(sniffed) ? sniffed : null;
  return looksLikeText(data) ? TEXT_TYPE : null;
}

/** A display name: no directories, no control characters, at most 255 characters. */
export function safeFileName(name: string | undefined): string {
  const base = (name ?? '').split(/[/\\]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  const limited = [...clean].slice(0, 255).join('');
  return limited === '' || limited === '.' || limited === '..' ? 'file' : limited;
}
