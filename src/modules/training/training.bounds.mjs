// What a document expands to, measured before its reader opens it (training.extract-worker.mjs):
// a DOCX is a zip whose XML parts a few megabytes may inflate to gigabytes (a zip bomb), and a PDF
// holds deflated streams that may do the same. Each part is inflated here with Node's zlib under a
// cap (`maxOutputLength`), its bytes dropped as they come, so refusing a bomb costs at most the
// cap in memory; only a document within the bounds reaches mammoth or pdf.js. Plain JavaScript,
// as the worker is (types in training.bounds.d.mts).
import { inflateRawSync, inflateSync } from 'node:zlib';

/** The XML of a DOCX (its text, styles, numbering, notes: every `.xml` and `.rels` part), at
 * most this many bytes uncompressed in all. */
export const DOCX_MAX_XML_BYTES = 32 * 1024 * 1024;
/** One deflated stream of a PDF (a page's content, a font, an image), at most this many bytes
 * uncompressed. */
export const PDF_MAX_STREAM_BYTES = 64 * 1024 * 1024;

export class TooLargeError extends Error {
  name = 'TooLargeError';
}

/** Inflates `data` (raw deflate or zlib) with at most `cap` bytes out; the size it came to, or
 * Infinity past the cap. Damaged data throws. */
function inflatedSize(data, cap, raw) {
  try {
    return (raw ? inflateRawSync : inflateSync)(data, { maxOutputLength: Math.max(1, cap) }).length;
  } catch (err) {
    if (err?.code === 'ERR_BUFFER_TOO_LARGE') return Infinity;
    throw err;
  }
}

/** Throws TooLargeError when the DOCX's XML inflates past DOCX_MAX_XML_BYTES (or it is no zip). */
export function checkDocx(buf, max = DOCX_MAX_XML_BYTES) {
  // The end of central directory record: its signature within the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a DOCX (no zip directory)');
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  let total = 0;
  for (let n = 0; n < count; n++) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== 0x02014b50)
      throw new Error('damaged DOCX (zip directory)');
    const method = buf.readUInt16LE(at + 10);
    const compressed = buf.readUInt32LE(at + 20);
    const nameLength = buf.readUInt16LE(at + 28);
    const extraLength = buf.readUInt16LE(at + 30);
    const commentLength = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (!/\.(xml|rels)$/i.test(name)) continue;
    if (compressed === 0xffffffff || local === 0xffffffff)
      throw new TooLargeError('a DOCX part is too large');
    if (local + 30 > buf.length || buf.readUInt32LE(local) !== 0x04034b50)
      throw new Error('damaged DOCX (zip entry)');
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const data = buf.subarray(start, start + compressed);
    const left = max - total;
    if (method === 0) total += data.length;
    else if (method === 8) total += inflatedSize(data, left + 1, true);
    else throw new Error(`a DOCX part compressed in an unknown way (${method})`);
    if (total > max)
      throw new TooLargeError(
        `the DOCX's text expands past ${max / 1024 / 1024} MiB (its XML, uncompressed)`,
      );
  }
}

/** Throws TooLargeError when one of the PDF's deflated streams inflates past PDF_MAX_STREAM_BYTES.
 * Every stream is tried (its dictionary is not parsed): one that is not deflate data is skipped. */
export function checkPdf(buf, max = PDF_MAX_STREAM_BYTES) {
  let from = 0;
  for (;;) {
    const at = buf.indexOf('stream', from, 'latin1');
    if (at < 0) return;
    from = at + 6;
    // `stream` then CRLF or LF starts the data (`endstream` is not a start).
    if (at >= 3 && buf.toString('latin1', at - 3, at) === 'end') continue;
    let start = at + 6;
    if (buf[start] === 0x0d) start++;
    if (buf[start] !== 0x0a) continue;
    start++;
    // A zlib stream starts with 0x78 (deflate, a 32 KiB window or less).
    if (buf[start] !== 0x78) continue;
    let size;
    try {
      size = inflatedSize(buf.subarray(start), max + 1, false);
    } catch {
      continue; // not deflate data, or damaged: pdf.js judges it
    }
    if (size > max)
      throw new TooLargeError(`a stream of the PDF expands past ${max / 1024 / 1024} MiB uncompressed`);
  }
}
