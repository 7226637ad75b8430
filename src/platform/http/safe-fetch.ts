// A guarded fetcher for URLs a client hands us (chat attachments): issue 5 "Attachment URLs are
// fetched server-side: block SSRF"; and its POST twin for URLs an administrator registers
// (webhooks), vetted the same way at every delivery. Only http(s); the host is resolved here and every address is
// vetted (no private, loopback, link-local, unique-local, CGNAT, multicast, unspecified, reserved
// or metadata address, IPv4 or IPv6, IPv4-mapped included); the connection goes to the vetted
// address (the socket's `lookup` answers with it, so no second DNS answer can rebind us);
// redirects are followed by hand and every hop is vetted again; size and time are capped; the
// content must be an image. ARCHITECTURE.md "Pitfalls": the model gets these bytes, never a URL.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { fileTypeFromBuffer } from 'file-type';
import { AppError, type ProblemCode } from './problem.js';

export type SafeFetchReason =
  | 'invalid_url'
  | 'blocked_scheme'
  | 'blocked_address'
  | 'dns_failure'
  | 'too_many_redirects'
  | 'bad_status'
  | 'too_large'
  | 'timeout'
  | 'not_an_image'
  | 'network';

const REASON_CODE: Record<SafeFetchReason, ProblemCode> = {
  invalid_url: 'validation_failed',
  blocked_scheme: 'validation_failed',
  blocked_address: 'validation_failed',
  dns_failure: 'validation_failed',
  too_many_redirects: 'validation_failed',
  bad_status: 'validation_failed',
  too_large: 'payload_too_large',
  timeout: 'validation_failed',
  not_an_image: 'unsupported_media_type',
  network: 'validation_failed',
};

/** A refused or failed fetch; a problem the chat turn can pass to `chatError` as it is. */
export class SafeFetchError extends AppError {
  constructor(
    public readonly reason: SafeFetchReason,
    detail: string,
  ) {
    super(REASON_CODE[reason], detail, { reason });
    this.name = 'SafeFetchError';
  }
}

// ---------------------------------------------------------------------------------------------
// Address vetting (pure)

type V4Range = [number, number, string]; // network as uint32, prefix length, what it is

const v4 = (a: string): number => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
const V4_BLOCKED: V4Range[] = [
  [v4('0.0.0.0'), 8, 'unspecified ("this network")'],
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'carrier-grade NAT'],
  [v4('127.0.0.0'), 8, 'loopback'],
  [v4('169.254.0.0'), 16, 'link-local (cloud metadata)'],
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'IETF protocol assignments'],
  [v4('192.0.2.0'), 24, 'documentation'],
  [v4('192.88.99.0'), 24, '6to4 relay'],
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'benchmarking'],
  [v4('198.51.100.0'), 24, 'documentation'],
  [v4('203.0.113.0'), 24, 'documentation'],
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved (and broadcast)'],
  // Public addresses some clouds serve metadata or platform services on.
  [v4('168.63.129.16'), 32, 'cloud metadata (Azure)'],
];

function v4Blocked(n: number): string | null {
  for (const [net, bits, what] of V4_BLOCKED) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((n & mask) >>> 0 === (net & mask) >>> 0) return what;
  }
  return null;
}

/** 8 hextets of an IPv6 literal (zone ids refused), or null when it does not parse. */
function parseV6(text: string): number[] | null {
  if (text.includes('%')) return null;
  let s = text;
  // A trailing dotted quad (::ffff:1.2.3.4) becomes its two hextets.
  const lastColon = s.lastIndexOf(':');
  const last = s.slice(lastColon + 1);
  if (last.includes('.')) {
    if (isIP(last) !== 4) return null;
    const n = v4(last);
    s = `${s.slice(0, lastColon + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const part = (p: string) => (p === '' ? [] : p.split(':'));
  const head = part(halves[0]!);
  const rest = halves.length === 2 ? part(halves[1]!) : [];
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  const fill = 8 - head.length - rest.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return null;
  const nums = (l: string[]) => l.map((g) => parseInt(g, 16));
  return [...nums(head), ...Array<number>(halves.length === 2 ? fill : 0).fill(0), ...nums(rest)];
}

function v6Prefix(h: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((h[i]! & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

const embeddedV4 = (hi: number, lo: number) => ((hi << 16) >>> 0) + lo;

/** Why an address must not be fetched from, or null when it is a public unicast address. */
export function blockedAddressReason(address: string): string | null {
  const family = isIP(address);
  if (family === 4) return v4Blocked(v4(address));
  if (family !== 6) return 'not an IP address';
  const h = parseV6(address.toLowerCase());
  if (!h) return 'not a plain IPv6 address';
  const zero = (n: number) => h.slice(0, n).every((x) => x === 0);
  if (zero(8)) return 'unspecified';
  if (zero(7) && h[7] === 1) return 'loopback';
  // IPv4 inside IPv6: mapped (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d), compatible
  // (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the IPv4 address; judge that one.
  if (zero(5) && h[5] === 0xffff) return v4Blocked(embeddedV4(h[6]!, h[7]!)) ?? null;
  if (zero(4) && h[4] === 0xffff && h[5] === 0) return v4Blocked(embeddedV4(h[6]!, h[7]!)) ?? null;
  if (zero(6)) return v4Blocked(embeddedV4(h[6]!, h[7]!)) ?? 'IPv4-compatible (deprecated)';
  if (v6Prefix(h, [0x64, 0xff9b], 96)) return v4Blocked(embeddedV4(h[6]!, h[7]!));
  if (v6Prefix(h, [0x2002], 16)) return v4Blocked(embeddedV4(h[1]!, h[2]!)) ?? null;
  const ranges: [number[], number, string][] = [
    [[0x64, 0xff9b, 1], 48, 'local-use NAT64'],
    [[0x100], 64, 'discard-only'],
    [[0x2001, 0], 32, 'Teredo'],
    [[0x2001, 0x2], 48, 'benchmarking'],
    [[0x2001, 0xdb8], 32, 'documentation'],
    [[0x3fff], 20, 'documentation'],
    [[0xfc00], 7, 'unique-local (includes cloud metadata fd00:ec2::254)'],
    [[0xfe80], 10, 'link-local'],
    [[0xfec0], 10, 'site-local (deprecated)'],
    [[0xff00], 8, 'multicast'],
  ];
  for (const [prefix, bits, what] of ranges) if (v6Prefix(h, prefix, bits)) return what;
  return null;
}

// ---------------------------------------------------------------------------------------------
// Fetching

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

export interface SafeFetchOptions {
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  /** Time for the whole fetch, redirects and body included. */
  timeoutMs: number;
  /** Redirects followed at most (default 3). */
  maxRedirects?: number;
  /** Name resolution; the system resolver by default. Tests inject one. */
  resolve?: Resolver;
  /** Tests only, never set by production code: lets the first hop reach a loopback address (a
   * test server), so that what follows (redirect vetting, caps) can be exercised. */
  allowLoopbackFirstHopForTests?: boolean;
}

export interface SafeFetchResult {
  /** The URL the bytes came from, after redirects. */
  url: string;
  /** Sniffed from the bytes. */
  mimeType: string;
  data: Buffer;
}

/** The image types a vision model takes; the bytes decide, not the server's header alone. */
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SafeFetchError('invalid_url', 'The URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new SafeFetchError('blocked_scheme', `Only http and https URLs are fetched, not ${url.protocol}`);
  if (url.username || url.password)
    throw new SafeFetchError('invalid_url', 'URLs with credentials are not fetched');
  return url;
}

/** Resolves the URL's host and vets every address; returns the one to connect to. */
async function vet(
  url: URL,
  resolve: Resolver,
  allowLoopback: boolean,
  signal: AbortSignal,
): Promise<ResolvedAddress> {
  // WHATWG URL has already normalised odd IPv4 spellings (2130706433, 0x7f.1) to dotted quads.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: ResolvedAddress[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) === 6 ? 6 : 4 }];
  else {
    try {
      // A resolver that hangs must not outlive the deadline.
      const aborted = new Promise<never>((_, reject) => {
        const stop = () => reject(new Error('deadline passed'));
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
      });
      addresses = await Promise.race([resolve(host), aborted]);
    } catch {
      if (signal.aborted) throw new SafeFetchError('timeout', 'Resolving the host took too long');
      throw new SafeFetchError('dns_failure', `The host ${host} could not be resolved`);
    }
    if (addresses.length === 0) throw new SafeFetchError('dns_failure', `The host ${host} has no address`);
  }
  // Every answer must be public: a name that also points inside is refused outright.
  for (const a of addresses) {
    const why = blockedAddressReason(a.address);
    if (why && !(allowLoopback && why === 'loopback'))
      throw new SafeFetchError(
        'blocked_address',
        `The host ${host} resolves to a ${why} address, which is not fetched`,
      );
  }
  return addresses[0]!;
}

/** The checks of the first hop without fetching: scheme, credentials, and every address the host
 * resolves to. Lets a caller refuse a bad URL at once and fetch later (redirects are vetted then). */
export async function vetUrl(
  rawUrl: string,
  opts: { timeoutMs: number; resolve?: Resolver; allowLoopbackFirstHopForTests?: boolean },
): Promise<void> {
  await vet(
    parseTarget(rawUrl),
    opts.resolve ?? systemResolver,
    opts.allowLoopbackFirstHopForTests === true,
    AbortSignal.timeout(opts.timeoutMs),
  );
}

interface Hop {
  status: number;
  location: string | undefined;
  contentType: string;
  data: Buffer;
}

interface RequestOptions {
  maxBytes: number;
  signal: AbortSignal;
  /** A POST with this body and these headers (default: an image GET). */
  post?: { headers: Record<string, string>; body: string };
  /** Keep the first `maxBytes` of a longer body instead of failing, whatever the status. */
  truncate?: boolean;
}

function requestOnce(url: URL, target: ResolvedAddress, opts: RequestOptions): Promise<Hop> {
  // The socket asks this for the host's address and gets the vetted one: no second lookup.
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Hop>((resolvePromise, reject) => {
    const req = client.request(
      url,
      {
        method: opts.post ? 'POST' : 'GET',
        agent: false,
        lookup,
        signal: opts.signal,
        headers: opts.post
          ? { ...opts.post.headers, 'content-length': String(Buffer.byteLength(opts.post.body)) }
          : { accept: 'image/*', 'user-agent': 'assistant-platform-attachment-fetcher' },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const contentType = String(res.headers['content-type'] ?? '');
        if (!opts.truncate && (REDIRECTS.has(status) || status < 200 || status >= 300)) {
          res.resume();
          resolvePromise({ status, location: res.headers.location, contentType, data: Buffer.alloc(0) });
          return;
        }
        const declared = Number(res.headers['content-length']);
        if (!opts.truncate && Number.isFinite(declared) && declared > opts.maxBytes) {
          req.destroy();
          reject(new SafeFetchError('too_large', `The attachment is larger than ${opts.maxBytes} bytes`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > opts.maxBytes && opts.truncate) {
            // Enough kept: answer with it and stop reading (the close that follows changes nothing).
            chunks.push(chunk.subarray(0, chunk.length - (size - opts.maxBytes)));
            resolvePromise({ status, location: undefined, contentType, data: Buffer.concat(chunks) });
            req.destroy();
            return;
          }
          if (size > opts.maxBytes) {
            req.destroy();
            reject(new SafeFetchError('too_large', `The attachment is larger than ${opts.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolvePromise({ status, location: undefined, contentType, data: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete) reject(new SafeFetchError('network', 'The attachment download was cut off'));
        });
      },
    );
    req.on('error', reject);
    // A body that trickles past the deadline: stop it here too, whatever the socket reports.
    opts.signal.addEventListener(
      'abort',
      () => {
        req.destroy();
        reject(new SafeFetchError('timeout', 'The request took too long'));
      },
      { once: true },
    );
    req.end(opts.post?.body);
  });
}

/** Fetches an image from a client-given URL, refusing anything that could reach inside. */
export async function safeFetch(rawUrl: string, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  const resolve = opts.resolve ?? systemResolver;
  const maxRedirects = opts.maxRedirects ?? 3;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  let url = parseTarget(rawUrl);
  try {
    for (let hop = 0; ; hop++) {
      const target = await vet(
        url,
        resolve,
        hop === 0 && opts.allowLoopbackFirstHopForTests === true,
        signal,
      );
      if (signal.aborted) throw signal.reason;
      const res = await requestOnce(url, target, { maxBytes: opts.maxBytes, signal });
      if (REDIRECTS.has(res.status)) {
        if (!res.location)
          throw new SafeFetchError(
            'bad_status',
            `The attachment URL answered ${res.status} without a location`,
          );
        if (hop >= maxRedirects)
          throw new SafeFetchError('too_many_redirects', `More than ${maxRedirects} redirects`);
        url = parseTarget(new URL(res.location, url).href);
        continue;
      }
      if (res.status < 200 || res.status >= 300)
        throw new SafeFetchError('bad_status', `The attachment URL answered ${res.status}`);
      const declared = res.contentType.split(';')[0]!.trim().toLowerCase();
      if (!declared.startsWith('image/'))
        throw new SafeFetchError(
          'not_an_image',
          `The attachment is ${declared || 'of no declared type'}, not an image`,
        );
      const sniffed = (await fileTypeFromBuffer(res.data))?.mime;
      if (!sniffed || !IMAGE_TYPES.includes(sniffed))
        throw new SafeFetchError('not_an_image', 'The attachment is not a PNG, JPEG, GIF or WebP image');
      return { url: url.href, mimeType: sniffed, data: res.data };
    }
  } catch (err) {
    if (err instanceof SafeFetchError && err.reason !== 'network') throw err;
    if (signal.aborted)
      throw new SafeFetchError('timeout', `The attachment took longer than ${opts.timeoutMs} ms`);
    if (err instanceof SafeFetchError) throw err;
    throw new SafeFetchError('network', 'The attachment could not be fetched');
  }
}

export interface SafePostOptions {
  headers: Record<string, string>;
  body: string;
  /** Time for the whole request, the answer's body included. */
  timeoutMs: number;
  /** Bytes of the answer's body kept (the rest is not read); default 1024. */
  keepBytes?: number;
  resolve?: Resolver;
  /** Tests only, never set by production code (see SafeFetchOptions). */
  allowLoopbackFirstHopForTests?: boolean;
}

export interface SafePostResult {
  status: number;
  /** The start of the answer's body (`keepBytes`), as text. */
  body: string;
}

/** POSTs to a URL an administrator registered (a webhook endpoint), vetted like `safeFetch`'s
 * first hop and pinned to the vetted address. Redirects are not followed: a 3xx is returned like
 * any other status, for the caller to judge. A refused address, a timeout or a network failure
 * throws SafeFetchError. */
export async function safePost(rawUrl: string, opts: SafePostOptions): Promise<SafePostResult> {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const url = parseTarget(rawUrl);
  try {
    const target = await vet(
      url,
      opts.resolve ?? systemResolver,
      opts.allowLoopbackFirstHopForTests === true,
      signal,
    );
    const res = await requestOnce(url, target, {
      maxBytes: opts.keepBytes ?? 1024,
      signal,
      post: { headers: opts.headers, body: opts.body },
      truncate: true,
    });
    return { status: res.status, body: res.data.toString('utf8') };
  } catch (err) {
    if (err instanceof SafeFetchError && err.reason !== 'network') throw err;
    if (signal.aborted) throw new SafeFetchError('timeout', `No answer within ${opts.timeoutMs} ms`);
    if (err instanceof SafeFetchError) throw err;
    throw new SafeFetchError('network', 'The URL could not be reached');
  }
}
