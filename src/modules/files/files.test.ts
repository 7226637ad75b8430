// Uploads over real multipart HTTP, on the real app and database; type sniffing and limits.
import { crc32 } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { AppError } from '../../platform/http/problem.js';
import * as repo from './files.repository.js';
import { acceptedType, looksLikeText, safeFileName } from './files.rules.js';

/** A stored (uncompressed) zip archive: enough for a DOCX the sniffer recognises. */
function zip(entries: [string, string][]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of entries) {
    const data = Buffer.from(text);
    const nameBuf = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, data);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const PDF = Buffer.from('%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n');
const DOCX = zip([
  [
    '[Content_Types].xml',
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  ],
  ['word/document.xml', '<w:document/>'],
]);
const TEXT = Buffer.from('Notes: grüße, 日本語 ✓\n\tindented\r\n');
const ELF = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0x3e, 0]);
const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const LIMIT = 64 * 1024;
let t: TestApp;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  t = await createTestApp({ UPLOAD_LIMIT: String(LIMIT), UPLOAD_MAX_FILES: '4' });
  [alice, bob] = await Promise.all([createUser(t, 'public'), createUser(t, 'public')]);
});
afterAll(() => t.close());

type Part = [name: string, data: Buffer, declaredType?: string];
async function upload(parts: Part[], token?: string, fields: Record<string, string> = {}) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const [name, data, type] of parts)
    form.append('file', new Blob([new Uint8Array(data)], { type: type ?? 'application/octet-stream' }), name);
  const res = await fetch(`${t.url}/api/files/upload`, {
    method: 'POST',
    body: form,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

const contextsOf = async (userId: number) =>
  (await t.deps.db.selectFrom('upload_contexts').select('id').where('user_id', '=', userId).execute()).length;

describe('POST /api/files/upload', () => {
  it('needs a token', async () => {
    const res = await upload([['a.png', PNG]]);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthenticated');
  });

  it('stores several files with types sniffed from their bytes', async () => {
    const res = await upload(
      [
        ['pixel.png', PNG, 'text/plain'],
        ['doc.pdf', PDF],
        ['letter.docx', DOCX],
        ['../../etc/notes.txt', TEXT, 'image/png'],
      ],
      alice.accessToken,
      { purpose: 'ignored field' },
    );
    expect(res.status).toBe(201);
    expect(res.body.uploadContextId).toMatch(/^[0-9a-f-]{36}$/);
    expect(
      res.body.files.map((f: { name: string; mimeType: string; size: number }) => [
        f.name,
        f.mimeType,
        f.size,
      ]),
    ).toEqual([
      ['pixel.png', 'image/png', PNG.length],
      ['doc.pdf', 'application/pdf', PDF.length],
      ['letter.docx', DOCX_TYPE, DOCX.length],
      ['notes.txt', 'text/plain', TEXT.length],
    ]);

    // The chat turn reads them back, for their owner only.
    const files = await t.deps.services.files.readContext(alice.id, res.body.uploadContextId);
    expect(files.map((f) => f.name)).toEqual(['pixel.png', 'doc.pdf', 'letter.docx', 'notes.txt']);
    expect(Buffer.compare(files[0]!.data, PNG)).toBe(0);
    expect(files[3]!.data.toString()).toBe(TEXT.toString());
    await expect(t.deps.services.files.readContext(bob.id, res.body.uploadContextId)).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(t.deps.services.files.readContext(alice.id, 'not-a-uuid')).rejects.toBeInstanceOf(AppError);
    await expect(
      t.deps.services.files.readContext(alice.id, '00000000-0000-4000-8000-000000000000'),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('refuses a type it does not accept with 415, storing nothing', async () => {
    const before = await contextsOf(bob.id);
    for (const [name, data] of [
      ['prog', ELF],
      ['archive.zip', zip([['a.txt', 'hi']])],
      ['fake.png', Buffer.from([0x00, 0x01, 0x02, 0x03, 0xff, 0xfe])],
    ] as const) {
      const res = await upload(
        [
          ['ok.png', PNG],
          [name, data, 'image/png'],
        ],
        bob.accessToken,
      );
      expect(res.status, name).toBe(415);
      expect(res.body.code).toBe('unsupported_media_type');
    }
    expect(await contextsOf(bob.id)).toBe(before);
  });

  it('refuses a file over the limit, and too many files, with 413', async () => {
    const big = await upload([['big.txt', Buffer.alloc(LIMIT + 1, 'a')]], bob.accessToken);
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ code: 'payload_too_large', limit: LIMIT });
    const exact = await upload([['exact.txt', Buffer.alloc(LIMIT, 'a')]], bob.accessToken);
    expect(exact.status).toBe(201);
    const many = await upload(
      Array.from({ length: 5 }, (_, i): Part => [`f${i}.png`, PNG]),
      bob.accessToken,
    );
    expect(many.status).toBe(413);
    expect(many.body.code).toBe('payload_too_large');
  });

  it('answers 400 without files or with an empty file', async () => {
    const none = await upload([], bob.accessToken, { note: 'no file here' });
    expect(none.status).toBe(400);
    expect(none.body.code).toBe('validation_failed');
    const empty = await upload([['empty.txt', Buffer.alloc(0)]], bob.accessToken);
    expect(empty.status).toBe(400);
  });

  it('answers 415 for a body that is not multipart', async () => {
    const json = await t.api('POST', '/api/files/upload', { token: bob.accessToken, body: { file: 'x' } });
    expect(json.status).toBe(415);
    expect(json.body.code).toBe('unsupported_media_type');
  });

  describe('a malformed multipart body answers 400, storing nothing', () => {
    let erin: TestUser;
    beforeAll(async () => {
      erin = await createUser(t, 'public');
    });
    const raw = (contentType: string, body: string) =>
      t.api('POST', '/api/files/upload', {
        token: erin.accessToken,
        headers: { 'content-type': contentType },
        body,
      });
    const part = (boundary: string, text: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n` +
      `Content-Type: text/plain\r\n\r\n${text}`;

    it.each([
      [
        'a body without the declared boundary',
        'multipart/form-data; boundary=x',
        'no boundary in here at all',
      ],
      ['no boundary parameter', 'multipart/form-data', part('x', 'hello') + '\r\n--x--\r\n'],
      ['a body cut off inside a file', 'multipart/form-data; boundary=x', part('x', 'hello, and then noth')],
      ['a body cut off inside the part headers', 'multipart/form-data; boundary=x', '--x\r\nContent-Dispo'],
      ['a boundary over 256 characters', `multipart/form-data; boundary=${'b'.repeat(300)}`, part('b', 'hi')],
    ])('%s', async (_name, contentType, body) => {
      const res = await raw(contentType, body);
      expect(res.status, res.text).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ code: 'validation_failed', status: 400 });
      expect(res.body.errors).toEqual([{ path: 'body', message: expect.any(String) }]);
      expect(await contextsOf(erin.id)).toBe(0);
    });

    it('a well-formed body still uploads', async () => {
      const res = await raw('multipart/form-data; boundary=x', part('x', 'hello') + '\r\n--x--\r\n');
      expect(res.status, res.text).toBe(201);
    });
  });

  it('refuses a NUL or a lone surrogate in a text field, or a NUL in a field name, with 400', async () => {
    const frank = await createUser(t, 'public');
    for (const [fields, path] of [
      [{ note: 'a\u0000b' }, 'body.note'],
      [{ ['n\u0000te']: 'fine' }, 'body.n\uFFFDte'],
    ] as const) {
      const res = await upload([['a.png', PNG]], frank.accessToken, fields);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        code: 'validation_failed',
        errors: [{ path, message: expect.stringContaining('NUL') }],
      });
    }
    // FormData sends text as UTF-8, where a lone surrogate cannot exist; a raw body can decode to
    // one only through a charset that maps bytes to UTF-16 code units one to one.
    const boundary = 'zz';
    const body =
      `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\nContent-Type: text/plain; charset=utf-16le\r\n\r\n` +
      `\u0000\u00d8\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello\r\n--${boundary}--\r\n`;
    const res = await fetch(`${t.url}/api/files/upload`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${frank.accessToken}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      body: new Uint8Array(Buffer.from(body, 'latin1')),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: unknown }).errors).toEqual([
      { path: 'body.note', message: expect.stringContaining('surrogate') },
    ]);
    expect(await contextsOf(frank.id)).toBe(0);
  });
});

describe('GET /api/files/upload', () => {
  it('answers 405 with Allow: POST', async () => {
    const res = await t.api('GET', '/api/files/upload', { token: alice.accessToken });
    expect(res.status).toBe(405);
    expect(res.body.code).toBe('method_not_allowed');
    expect(res.headers.get('allow')).toBe('POST');
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });

  it('needs a token', async () => {
    expect((await t.api('GET', '/api/files/upload')).status).toBe(401);
  });
});

describe('upload rules', () => {
  it.each([
    ['image/png', PNG, 'image/png'],
    ['application/pdf', PDF, 'application/pdf'],
    [DOCX_TYPE, DOCX, DOCX_TYPE],
    ['application/zip', Buffer.from('PK'), null],
    ['image/svg+xml', Buffer.from('<svg/>'), null],
    ['image/tiff', Buffer.from('II*'), null],
    [undefined, TEXT, 'text/plain'],
    [undefined, Buffer.from([0x61, 0x00, 0x62]), null],
    [undefined, Buffer.from([0xc3, 0x28]), null],
    [undefined, Buffer.from('bell \u0007'), null],
  ] as const)('sniffed %s', (sniffed, data, expected) => {
    expect(acceptedType(sniffed, data)).toBe(expected);
  });

  it('recognises text', () => {
    expect(looksLikeText(Buffer.alloc(0))).toBe(false);
    expect(looksLikeText(Buffer.from('\ufeffBOM text\f'))).toBe(true);
  });

  it.each([
    ['report.pdf', 'report.pdf'],
    ['../../etc/passwd', 'passwd'],
    ['C:\\Users\\me\\photo.png', 'photo.png'],
    ['a\u0000b\nc.txt', 'abc.txt'],
    ['..', 'file'],
    ['', 'file'],
    [undefined, 'file'],
    ['x'.repeat(300), 'x'.repeat(255)],
  ])('names %j as %j', (name, expected) => {
    expect(safeFileName(name)).toBe(expected);
  });
});

describe('upload quota, rate and retention', () => {
  // Its own service: a 100-byte quota, 6 uploads a minute, 7 days of retention.
  let q: TestApp;
  let carol: TestUser;
  let dave: TestUser;
  const post = async (app: TestApp, data: Buffer, token: string) => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(data)]), 'notes.txt');
    const res = await fetch(`${app.url}/api/files/upload`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };
  const storedBytes = (userId: number) => repo.storedBytes(q.deps.db, userId);

  beforeAll(async () => {
    q = await createTestApp({
      UPLOAD_QUOTA_BYTES: '100',
      UPLOAD_RATE_LIMIT: '6',
      UPLOAD_RETENTION_DAYS: '7',
    });
    [carol, dave] = await Promise.all([createUser(q, 'public'), createUser(q, 'public')]);
  });
  afterAll(() => q.close());

  it('refuses an upload past the quota with 413, storing nothing; deleting one frees its bytes', async () => {
    const first = await post(q, Buffer.alloc(60, 'a'), carol.accessToken);
    expect(first.status).toBe(201);
    const over = await post(q, Buffer.alloc(41, 'b'), carol.accessToken);
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ code: 'payload_too_large', quota: 100, used: 60 });
    expect(await storedBytes(carol.id)).toBe(60);
    // The quota is each user's own.
    expect((await post(q, Buffer.alloc(100, 'd'), dave.accessToken)).status).toBe(201);

    // Only the owner deletes a context; anyone else (and a malformed id) gets 404.
    const path = `/api/files/upload/${first.body.uploadContextId}`;
    expect((await q.api('DELETE', path)).status).toBe(401);
    const foreign = await q.api('DELETE', path, { token: dave.accessToken });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('not_found');
    expect((await q.api('DELETE', '/api/files/upload/nonsense', { token: carol.accessToken })).status).toBe(
      404,
    );
    expect(await storedBytes(carol.id)).toBe(60);
    expect((await q.api('DELETE', path, { token: carol.accessToken })).status).toBe(204);
    expect((await q.api('DELETE', path, { token: carol.accessToken })).status).toBe(404);
    expect(await storedBytes(carol.id)).toBe(0);
    await expect(
      q.deps.services.files.readContext(carol.id, first.body.uploadContextId),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    expect((await post(q, Buffer.alloc(100, 'c'), carol.accessToken)).status).toBe(201);
  });

  it('lets concurrent uploads fill the quota, never pass it', async () => {
    const erin = await createUser(q, 'public');
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => post(q, Buffer.alloc(40, String(i)), erin.accessToken)),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 413, 413]);
    expect(await storedBytes(erin.id)).toBe(80);
  });

  it('answers 429 with Retry-After past the per-minute limit', async () => {
    const frank = await createUser(q, 'public');
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 7; i++) {
      const res = await post(q, Buffer.alloc(1, 'f'), frank.accessToken);
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 201, 429]);
    expect(limited!.body.code).toBe('rate_limited');
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await storedBytes(frank.id)).toBe(6);
  });

  it('deletes contexts past the retention period in the maintenance sweep, and only those', async () => {
    const grace = await createUser(q, 'public');
    const old = await post(q, Buffer.alloc(10, 'o'), grace.accessToken);
    const recent = await post(q, Buffer.alloc(10, 'r'), grace.accessToken);
    await sql`update upload_contexts set created_at = now() - interval '8 days'
      where id = ${old.body.uploadContextId}`.execute(q.deps.db);
    expect(await q.deps.services.files.sweep()).toBe(1);
    await expect(q.deps.services.files.readContext(grace.id, old.body.uploadContextId)).rejects.toMatchObject(
      {
        code: 'not_found',
      },
    );
    expect(await q.deps.services.files.readContext(grace.id, recent.body.uploadContextId)).toHaveLength(1);
    expect(await storedBytes(grace.id)).toBe(10);
  });
});
