/* eslint-disable @typescript-eslint/no-explicit-any -- a test helper: it reads untyped JSON bodies, as the tests do */
// Test files built for real (a PDF, a DOCX, text PNGs) and the multipart client of the training
// tests. Used by tests and the benchmark only.
import { createCanvas } from '@napi-rs/canvas';
import { Document, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { TestApp } from '../../../test/harness.js';

/** A PDF with the given lines on each page (Helvetica: Latin-1 text). */
export async function buildPdf(pages: string[][]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = doc.addPage([595, 842]);
    lines.forEach((line, i) => page.drawText(line, { x: 40, y: 800 - i * 16, size: 10, font }));
  }
  return Buffer.from(await doc.save());
}

export async function buildDocx(paragraphs: string[]): Promise<Buffer> {
  const doc = new Document({ sections: [{ children: paragraphs.map((p) => new Paragraph(p)) }] });
  return Packer.toBuffer(doc);
}

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

export interface FormFile {
  name: string;
  data: Buffer;
  type?: string;
  field?: string;
}

/** POSTs a multipart form over real HTTP. */
export async function postForm(
  t: TestApp,
  path: string,
  token: string | undefined,
  fields: Record<string, string>,
  files: FormFile[],
): Promise<{ status: number; headers: Headers; body: any }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of files)
    form.append(
      f.field ?? 'file',
      new Blob([new Uint8Array(f.data)], { type: f.type ?? 'application/octet-stream' }),
      f.name,
    );
  const res = await fetch(t.url + path, {
    method: 'POST',
    body: form,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body };
}

/** Sentences of about `words` words, numbered so each is distinct. */
export function sentences(n: number, prefix = 'The lighthouse keeper'): string[] {
  return Array.from(
    { length: n },
    (_, i) => `${prefix} number ${i + 1} watches the northern sea every night.`,
  );
}
