// The document extraction thread (training.extract.ts runs it): PDF with unpdf, DOCX with
// mammoth, UTF-8 text decoded, then normalised and cut to `maxChars` (training.text.mjs), off the
// service's event loop. Plain JavaScript so it loads the same way under tsx, vitest and node. One
// request at a time: { id, op: 'inspect' | 'extract', type: 'pdf' | 'docx' | 'text', data,
// maxChars } → { id, ok: true, pages, text, truncated } or { id, ok: false, error, tooLarge }.
import { parentPort } from 'node:worker_threads';
import mammoth from 'mammoth';
import { extractText, getDocumentProxy } from 'unpdf';
import { checkDocx, checkPdf, TooLargeError } from './training.bounds.mjs';
import { keepChars, normaliseText } from './training.text.mjs';

async function raw({ op, type, data }) {
  // What the file expands to is bounded before a reader opens it (training.bounds.mjs).
  const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (type === 'pdf') checkPdf(buffer);
  if (type === 'docx') checkDocx(buffer);
  if (type === 'pdf') {
    // verbosity 0: pdf.js's warnings about damaged files are not printed (the error is the answer).
    const pdf = await getDocumentProxy(data, { verbosity: 0 });
    try {
      if (op === 'inspect') return { pages: pdf.numPages, text: null };
      const { text } = await extractText(pdf, { mergePages: false });
      return { pages: pdf.numPages, text: text.join('\n\n') };
    } finally {
      await pdf.loadingTask.destroy();
    }
  }
  if (type === 'docx') {
    const { value } = await mammoth.extractRawText({ buffer });
    return { pages: null, text: op === 'extract' ? value : null };
  }
  if (type === 'text')
    return { pages: null, text: op === 'extract' ? new TextDecoder('utf-8').decode(data) : null };
  throw new Error(`cannot extract ${type}`);
}

async function handle(msg) {
  const { pages, text } = await raw(msg);
  if (text === null) return { pages, text: null, truncated: false };
  return { pages, ...keepChars(normaliseText(text), msg.maxChars ?? Infinity) };
}

parentPort.on('message', (msg) => {
  handle(msg).then(
    (result) => parentPort.postMessage({ id: msg.id, ok: true, ...result }),
    (err) =>
      parentPort.postMessage({
        id: msg.id,
        ok: false,
        error: String(err?.message ?? err),
        tooLarge: err instanceof TooLargeError,
      }),
  );
});
