// Documents built for real (a PDF, a DOCX) and a multipart client, for the tests that send files:
// training's and chat's. Used by tests and the benchmark only.
import { Document, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { TestApp } from './harness.js';

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
