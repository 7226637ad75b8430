// The SSRF guard: refused addresses (IPv4, IPv6, mapped), schemes, redirect hops, size and time
// caps, content checks. A loopback test server stands in for the outside world; the option that
// lets the first hop reach it is one production code never sets.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/eventually.js';
import {
  blockedAddressReason,
  safeFetch,
  SafeFetchError,
  safePost,
  type Resolver,
  type SafeFetchOptions,
} from './safe-fetch.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

let server: Server;
let base: string;
let port: number;
const timers = new Set<NodeJS.Timeout>();
/** Paths whose connection the client closed before the server had finished answering. */
const cutOff: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/echo') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            method: req.method,
            signature: req.headers['x-signature'],
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      });
    } else if (path === '/img.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
      res.end(PNG);
    } else if (path === '/redirect-loopback') {
      res.writeHead(302, { location: `http://127.0.0.1:${port}/img.png` });
      res.end();
    } else if (path === '/redirect-relative') {
      res.writeHead(301, { location: '/img.png' });
      res.end();
    } else if (path === '/redirect-internal-name') {
      res.writeHead(307, { location: 'http://intranet.test/secret.png' });
      res.end();
    } else if (path === '/redirect-metadata') {
      res.writeHead(308, { location: 'http://169.254.169.254/latest/meta-data/' });
      res.end();
    } else if (path === '/redirect-file') {
      res.writeHead(302, { location: 'file:///etc/passwd' });
      res.end();
    } else if (path === '/big-declared') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 10_000 });
      res.end(Buffer.concat([PNG, Buffer.alloc(10_000 - PNG.length)]));
    } else if (path === '/big-chunked') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(PNG);
      for (let i = 0; i < 20; i++) res.write(Buffer.alloc(1000));
      res.end();
    } else if (path === '/slow-body' || path === '/no-answer') {
      // The outside world at its slowest: the rest of the answer (or all of it) comes 5 s later.
      if (path === '/slow-body') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(PNG.subarray(0, 8));
      }
      const timer = setTimeout(() => res.end(path === '/slow-body' ? PNG.subarray(8) : undefined), 5_000);
      timers.add(timer);
      res.on('close', () => {
        if (!res.writableFinished) cutOff.push(path);
      });
    } else if (path === '/html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html></html>');
    } else if (path === '/liar') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end('just text pretending');
    } else if (path === '/svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end('<svg xmlns="http://www.w3.org/2000/svg"/>');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const t of timers) clearTimeout(t);
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const opts: SafeFetchOptions = { maxBytes: 4096, timeoutMs: 2000 };
const testOpts: SafeFetchOptions = { ...opts, allowLoopbackFirstHopForTests: true };

async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SafeFetchError) return err.reason;
    throw err;
  }
  return 'fetched';
}

describe('blockedAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.100.100.200', 'carrier-grade NAT'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['168.63.129.16', 'cloud metadata (Azure)'],
    ['0.0.0.0', 'unspecified ("this network")'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved (and broadcast)'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique-local (includes cloud metadata fd00:ec2::254)'],
    ['fd00:ec2::254', 'unique-local (includes cloud metadata fd00:ec2::254)'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:169.254.169.254', 'link-local (cloud metadata)'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2001:db8::1', 'documentation'],
    ['2001::1', 'Teredo'],
    ['fe80::1%eth0', 'not a plain IPv6 address'],
    ['example.com', 'not an IP address'],
  ])('%s is refused (%s)', (address, why) => {
    expect(blockedAddressReason(address)).toBe(why);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is public', (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });
});

describe('safeFetch refuses before connecting', () => {
  it.each([
    ['http://127.0.0.1/', 'blocked_address'],
    ['http://localhost/', 'blocked_address'],
    ['http://[::1]/', 'blocked_address'],
    ['http://[::ffff:127.0.0.1]/', 'blocked_address'],
    ['http://169.254.169.254/latest/meta-data/', 'blocked_address'],
    ['http://[::ffff:a9fe:a9fe]/', 'blocked_address'],
    ['http://10.1.2.3/img.png', 'blocked_address'],
    ['https://192.168.0.10/', 'blocked_address'],
    ['http://2130706433/', 'blocked_address'],
    ['http://0x7f.1/', 'blocked_address'],
    ['http://0.0.0.0/', 'blocked_address'],
    ['file:///etc/passwd', 'blocked_scheme'],
    ['ftp://example.com/a.png', 'blocked_scheme'],
    ['gopher://example.com/', 'blocked_scheme'],
    ['data:image/png;base64,AAAA', 'blocked_scheme'],
    ['javascript:alert(1)', 'blocked_scheme'],
    ['not a url', 'invalid_url'],
    ['http://user:secret@example.com/a.png', 'invalid_url'],
  ])('%s → %s', async (url, expected) => {
    expect(await reason(safeFetch(url, opts))).toBe(expected);
  });

  it('refuses a name with any internal address, and a name that does not resolve', async () => {
    const mixed: Resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    expect(await reason(safeFetch('http://rebind.test/a.png', { ...opts, resolve: mixed }))).toBe(
      'blocked_address',
    );
    const v6: Resolver = async () => [{ address: 'fd12::1', family: 6 }];
    expect(await reason(safeFetch('http://v6.test/a.png', { ...opts, resolve: v6 }))).toBe('blocked_address');
    const none: Resolver = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await reason(safeFetch('http://nowhere.test/a.png', { ...opts, resolve: none }))).toBe(
      'dns_failure',
    );
  });

  it('is a problem the chat turn can send as it is', async () => {
    const err = await safeFetch('http://127.0.0.1/', opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SafeFetchError);
    expect((err as SafeFetchError).toProblem()).toMatchObject({
      status: 400,
      code: 'validation_failed',
      reason: 'blocked_address',
    });
  });

  it('does not let loopback through without the test option', async () => {
    expect(await reason(safeFetch(`${base}/img.png`, opts))).toBe('blocked_address');
  });
});

describe('safeFetch against a test server', () => {
  it('fetches an image and reports its sniffed type', async () => {
    const res = await safeFetch(`${base}/img.png`, testOpts);
    expect(res).toMatchObject({ url: `${base}/img.png`, mimeType: 'image/png' });
    expect(Buffer.compare(res.data, PNG)).toBe(0);
  });

  it('connects to the vetted address without a second lookup', async () => {
    let calls = 0;
    const resolve: Resolver = async () => {
      calls++;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    // images.test exists only in this resolver: the socket must use the answer we vetted.
    const res = await safeFetch(`http://images.test:${port}/img.png`, { ...testOpts, resolve });
    expect(res.mimeType).toBe('image/png');
    expect(calls).toBe(1);
  });

  it.each([
    ['/redirect-loopback', 'blocked_address'],
    ['/redirect-relative', 'blocked_address'],
    ['/redirect-metadata', 'blocked_address'],
    ['/redirect-file', 'blocked_scheme'],
  ])('re-checks every redirect hop: %s → %s', async (path, expected) => {
    expect(await reason(safeFetch(`${base}${path}`, testOpts))).toBe(expected);
  });

  it('re-resolves a redirect to a name and refuses an internal answer', async () => {
    const resolve: Resolver = async (host) => [
      { address: host === 'intranet.test' ? '10.20.30.40' : '127.0.0.1', family: 4 },
    ];
    expect(await reason(safeFetch(`${base}/redirect-internal-name`, { ...testOpts, resolve }))).toBe(
      'blocked_address',
    );
  });

  it('stops after the maximum number of redirects', async () => {
    expect(await reason(safeFetch(`${base}/redirect-loopback`, { ...testOpts, maxRedirects: 0 }))).toBe(
      'too_many_redirects',
    );
  });

  it('caps the size, declared or streamed', async () => {
    expect(await reason(safeFetch(`${base}/big-declared`, testOpts))).toBe('too_large');
    expect(await reason(safeFetch(`${base}/big-chunked`, testOpts))).toBe('too_large');
    const err = await safeFetch(`${base}/big-chunked`, testOpts).catch((e: unknown) => e);
    expect((err as SafeFetchError).status).toBe(413);
  });

  it.each(['/slow-body', '/no-answer'])(
    'caps the time: gives up on %s with a timeout and hangs up',
    async (path) => {
      // The server would answer in full (and the fetch succeed or find no image) 5 s later.
      expect(await reason(safeFetch(`${base}${path}`, { ...testOpts, timeoutMs: 300 }))).toBe('timeout');
      // The connection was closed on the server before its answer was complete: nothing lingers.
      await eventually(() => expect(cutOff).toContain(path));
    },
  );

  it('times out a resolver that hangs', async () => {
    const hang: Resolver = () => new Promise(() => undefined);
    expect(
      await reason(safeFetch('http://slow-dns.test/a.png', { ...opts, timeoutMs: 200, resolve: hang })),
    ).toBe('timeout');
  });

  it('accepts images only, by header and by bytes', async () => {
    expect(await reason(safeFetch(`${base}/html`, testOpts))).toBe('not_an_image');
    expect(await reason(safeFetch(`${base}/liar`, testOpts))).toBe('not_an_image');
    expect(await reason(safeFetch(`${base}/svg`, testOpts))).toBe('not_an_image');
    const err = await safeFetch(`${base}/html`, testOpts).catch((e: unknown) => e);
    expect((err as SafeFetchError).status).toBe(415);
  });

  it('refuses an error status', async () => {
    expect(await reason(safeFetch(`${base}/missing`, testOpts))).toBe('bad_status');
  });
});

describe('safePost (webhook deliveries)', () => {
  const post = { headers: { 'content-type': 'application/json', 'x-signature': 'sig' }, body: '{"a":1}' };
  const postOpts = { ...post, timeoutMs: 2000, allowLoopbackFirstHopForTests: true };

  it('posts the body and headers and answers the status with the start of the body', async () => {
    const res = await safePost(`${base}/echo`, postOpts);
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toEqual({ method: 'POST', signature: 'sig', body: '{"a":1}' });
  });

  it('keeps only the first bytes of a long answer, and any status', async () => {
    const res = await safePost(`${base}/big-chunked`, { ...postOpts, keepBytes: 100 });
    expect(res.status).toBe(200);
    expect(Buffer.byteLength(res.body, 'latin1')).toBeLessThanOrEqual(100);
    expect((await safePost(`${base}/missing`, postOpts)).status).toBe(404);
  });

  it('does not follow a redirect: its status is the answer', async () => {
    expect((await safePost(`${base}/redirect-metadata`, postOpts)).status).toBe(308);
  });

  it('vets the address at every call: loopback without the test option, a name turned internal', async () => {
    expect(await reason(safePost(`${base}/echo`, { ...post, timeoutMs: 2000 }))).toBe('blocked_address');
    // The name resolved to a public address when it was registered; now it points inside.
    const rebound: Resolver = async () => [{ address: '10.20.30.40', family: 4 }];
    expect(await reason(safePost('http://hooks.test/in', { ...postOpts, resolve: rebound }))).toBe(
      'blocked_address',
    );
    expect(await reason(safePost('ftp://hooks.test/in', postOpts))).toBe('blocked_scheme');
  });

  it('connects to the vetted address and caps the time', async () => {
    const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    expect((await safePost(`http://hooks.test:${port}/echo`, { ...postOpts, resolve })).status).toBe(201);
    expect(await reason(safePost(`${base}/no-answer`, { ...postOpts, timeoutMs: 300 }))).toBe('timeout');
  });
});
