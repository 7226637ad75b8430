// Text that no request may carry: U+0000 (PostgreSQL's text and jsonb refuse it: "invalid byte
// sequence for encoding UTF8: 0x00") and unpaired UTF-16 surrogates (not Unicode: jsonb refuses
// them as invalid JSON, and a text column would silently store U+FFFD instead). Pure: the HTTP
// hook (app.ts), parseOrThrow (socket payloads) and the upload's text fields call it.

/** Where unsafe text was found: the path of the string (or of the object key) and why. */
export interface UnsafeText {
  path: (string | number)[];
  message: string;
}

// Without the `u` flag a regular expression sees UTF-16 code units, so it can find a high
// surrogate not followed by a low one and a low surrogate not preceded by a high one.
const UNSAFE_SOURCE =
  '\\u0000|[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]';
const UNSAFE = new RegExp(UNSAFE_SOURCE);
const UNSAFE_ALL = new RegExp(UNSAFE_SOURCE, 'g');

/** Why a string is unsafe, or null when it is fine. */
export function unsafeTextReason(text: string): string | null {
  const found = UNSAFE.exec(text);
  if (!found) return null;
  return found[0] === '\u0000'
    ? 'must not contain NUL characters (U+0000)'
    : 'must not contain unpaired UTF-16 surrogates';
}

/** A path segment safe to show: an unsafe key is shown with U+FFFD in place of each bad unit. */
function displayKey(key: string): string {
  return key.replace(UNSAFE_ALL, '\uFFFD');
}

/** Binary data and dates are not text; any other object (plain, null-prototype, a query
 * string's own dictionary type) is walked through its own enumerable keys. */
function isOpaque(value: object): boolean {
  return ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof Date;
}

interface Node {
  value: unknown;
  /** The segment that leads here from `parent` (none for the root). */
  segment?: string | number;
  parent?: Node;
  /** The value is an object key (reported as the key, with U+FFFD for its bad units). */
  isKey?: boolean;
}

function pathOf(node: Node, prefix: (string | number)[]): (string | number)[] {
  const segments: (string | number)[] = [];
  for (let n: Node | undefined = node; n?.parent; n = n.parent) segments.push(n.segment!);
  return [...prefix, ...segments.reverse()];
}

/**
 * The first string, or object key, holding U+0000 or an unpaired surrogate, walking arrays and
 * objects in document order (iteratively, with parent links: a deeply nested body costs neither
 * stack nor a copied path per level). Binary data and dates are skipped. For JSON-like input
 * (parsed bodies, queries, headers, socket payloads): a cyclic object is not expected. `path`
 * prefixes the result's path.
 */
export function findUnsafeText(value: unknown, path: (string | number)[] = []): UnsafeText | null {
  const stack: Node[] = [{ value }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v === 'string') {
      const reason = unsafeTextReason(v);
      if (!reason) continue;
      if (!node.isKey) return { path: pathOf(node, path), message: reason };
      return {
        path: [...pathOf(node.parent!, path), displayKey(v)],
        message: `a key ${reason}`,
      };
    }
    if (typeof v !== 'object' || v === null) continue;
    const children: Node[] = [];
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) children.push({ value: v[i], segment: i, parent: node });
    } else if (!isOpaque(v)) {
      const record = v as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        children.push({ value: key, parent: node, isKey: true });
        children.push({ value: record[key], segment: key, parent: node });
      }
    }
    // Pushed in reverse so that the first child is examined first.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return null;
}
