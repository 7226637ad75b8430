// Test files built for real (a PDF, a DOCX, text PNGs) and the multipart client of the training
// tests. Used by tests and the benchmark only. The PDF, the DOCX and the multipart client are
// test/documents.ts's, shared with the chat tests.
import { createCanvas } from '@napi-rs/canvas';

export { buildDocx, buildPdf, postForm, type FormFile } from '../../../test/documents.js';

/** Black text on white, one line per entry, in DejaVu Sans. */
export function buildTextPng(
  lines: string[],
  opts: { width?: number; height?: number; size?: number } = {},
): Buffer {
  const size = opts.size ?? 40;
  const width = opts.width ?? 1000;
  const height = opts.height ?? Math.max(120, lines.length * size * 1.6 + 60);
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = 'white';
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = 'black';
  ctx.font = `${size}px DejaVu Sans`;
  lines.forEach((line, i) => ctx.fillText(line, 30, 30 + size + i * size * 1.6));
  return canvas.toBuffer('image/png');
}

/** Sentences of about `words` words, numbered so each is distinct. */
export function sentences(n: number, prefix = 'The lighthouse keeper'): string[] {
  return Array.from(
    { length: n },
    (_, i) => `${prefix} number ${i + 1} watches the northern sea every night.`,
  );
}
