// Documents built for real (a PDF, a DOCX) and a multipart client, for the tests that send files:
// training's and chat's. Used by tests and the benchmark only.
import { once } from 'node:events';
import { crc32, createDeflateRaw } from 'node:zlib';
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

/** A zip shaped as a DOCX whose document XML inflates to `bytes` bytes (a zip bomb: a few hundred
 * kilobytes for hundreds of megabytes), deflated as it is made, never held whole. */
export async function buildZipBomb(bytes: number): Promise<Buffer> {
  const types = Buffer.from(
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  );
  const deflate = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const chunk = Buffer.alloc(1 << 20, 0x20);
  let crc = 0;
  for (let left = bytes; left > 0; left -= chunk.length) {
    const c = left >= chunk.length ? chunk : chunk.subarray(0, left);
    crc = crc32(c, crc);
    if (!deflate.write(c)) await once(deflate, 'drain');
  }
  const ended = once(deflate, 'end');
  deflate.end();
  await ended;
  const entries = [
    { name: '[Content_Types].xml', method: 0, data: types, crc: crc32(types), size: types.length },
    { name: 'word/document.xml', method: 8, data: Buffer.concat(out), crc, size: bytes },
  ];
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(e.method, 8);
    local.writeUInt32LE(e.crc, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.size, 22);
    local.writeUInt16LE(name.length, 26);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(e.method, 10);
    dir.writeUInt32LE(e.crc, 16);
    dir.writeUInt32LE(e.data.length, 20);
    dir.writeUInt32LE(e.size, 24);
    dir.writeUInt16LE(name.length, 28);
    dir.writeUInt32LE(offset, 42);
    parts.push(local, name, e.data);
    central.push(dir, name);
    offset += local.length + name.length + e.data.length;
  }
  const dirBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dirBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, dirBytes, end]);
}
