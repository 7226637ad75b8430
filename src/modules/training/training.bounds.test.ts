// What a document expands to, bounded before its reader opens it: real files within the bounds,
// deflated parts past them refused, whatever the file's own size.
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildDocx, buildPdf, buildZipBomb } from '../../../test/documents.js';
import { checkDocx, checkPdf, TooLargeError } from './training.bounds.mjs';

const MiB = 1024 * 1024;

describe('document bounds', () => {
  it('a real DOCX and PDF are within them', async () => {
    const docx = Buffer.from(await buildDocx(['The keeper counts ships.']));
    const pdf = Buffer.from(await buildPdf([['The keeper counts ships.']]));
    expect(() => checkDocx(docx)).not.toThrow();
    expect(() => checkPdf(pdf)).not.toThrow();
  });

  it('a DOCX whose XML inflates past the bound is refused as too large', async () => {
    const bomb = await buildZipBomb(3 * MiB);
    expect(bomb.length).toBeLessThan(64 * 1024);
    expect(() => checkDocx(bomb, 2 * MiB)).toThrow(TooLargeError);
    expect(() => checkDocx(bomb, 4 * MiB)).not.toThrow();
    expect(() => checkDocx(Buffer.from('not a zip at all'))).toThrow(/no zip directory/);
  });

  it('a PDF stream that inflates past the bound is refused as too large', () => {
    const stream = deflateSync(Buffer.alloc(3 * MiB, 0x20));
    const pdf = Buffer.concat([
      Buffer.from(`%PDF-1.4\n1 0 obj << /Length ${stream.length} /Filter /FlateDecode >>\nstream\r\n`),
      stream,
      Buffer.from('\nendstream\nendobj\n%%EOF\n'),
    ]);
    expect(() => checkPdf(pdf, 2 * MiB)).toThrow(TooLargeError);
    expect(() => checkPdf(pdf, 4 * MiB)).not.toThrow();
  });
});
