// The document extraction thread (training.extract.ts runs it): PDF with unpdf, DOCX with
// mammoth, off the service's event loop. Plain JavaScript so it loads the same way under tsx,
// vitest and node. One request at a time: { id, op: 'inspect' | 'extract', type: 'pdf' | 'docx',
// data } → { id, ok: true, pages, text } or { id, ok: false, error }.
import { parentPort } from 'node:worker_threads';
import mammoth from 'mammoth';
import { extractText, getDocumentProxy } from 'unpdf';

async function handle({ op, type, data }) {
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
    const { value } = await mammoth.extractRawText({
      buffer: Buffer.from(data.buffer, data.byteOffset, data.byteLength),
    });
    return { pages: null, text: op === 'extract' ? value : null };
  }
  throw new Error(`cannot extract ${type}`);
}

parentPort.on('message', (msg) => {
  handle(msg).then(
    (result) => parentPort.postMessage({ id: msg.id, ok: true, ...result }),
    (err) => parentPort.postMessage({ id: msg.id, ok: false, error: String(err?.message ?? err) }),
  );
});
