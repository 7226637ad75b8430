// A client sending bodies over a limit, in a process of its own (as a client on another machine:
// in the server's process the two share one event loop, and the server's close never meets a
// write in flight). Node's fetch sends `requests` bodies of `bytes` bytes of each kind, one at a
// time, and counts each outcome: "413" when it read the 413 problem+json, else the status or the
// error's code (EPIPE, ECONNRESET). Prints { kind: { outcome: count } } as JSON on stdout.
// Used by test/oversized-bodies.test.ts and bench/oversized.ts.
// Run: node test/oversized-client.mjs '{ "url", "token", "npcUserId", "requests", "bytes", "kinds" }'
const o = JSON.parse(process.argv[2]);
const CHUNK = 64 * 1024;
const filler = new Uint8Array(CHUNK).fill(0x61);
const encode = (s) => new TextEncoder().encode(s);

/** The body in chunks of 64 KiB, as a client streaming it sends them (chunked encoding). */
function stream(prefix, size, suffix) {
  let sent = -1;
  return new ReadableStream({
    pull(controller) {
      if (sent < 0) {
        controller.enqueue(encode(prefix));
        sent = 0;
      } else if (sent >= size) {
        controller.enqueue(encode(suffix));
        controller.close();
      } else {
        const n = Math.min(CHUNK, size - sent);
        controller.enqueue(n === CHUNK ? filler : filler.subarray(0, n));
        sent += n;
      }
    },
  });
}

const boundary = 'oversizedbenchboundary';
const requestOf = {
  // Content-Length given: the server refuses before reading the body.
  'json-length': () => [
    '/api/auth/login',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'x@example.test', password: 'a'.repeat(o.bytes) }),
    },
  ],
  // Streamed: the server refuses once the limit is passed.
  'json-stream': () => [
    '/api/auth/login',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream('{"email":"x@example.test","password":"', o.bytes, '"}'),
      duplex: 'half',
    },
  ],
  // One file over UPLOAD_LIMIT in a multipart upload.
  'upload-stream': () => ['/api/files/upload', form({})],
  // A training document over TRAINING_FILE_LIMIT.
  'training-stream': () => ['/api/training/ingest-file', form({ npcUserId: String(o.npcUserId) })],
};

/** A multipart form: the fields, then one file part of `bytes` bytes. */
function form(fields) {
  const head = Object.entries(fields)
    .map(([k, v]) => `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
    .join('');
  return {
    method: 'POST',
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      authorization: `Bearer ${o.token}`,
    },
    body: stream(
      `${head}--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.txt"\r\ncontent-type: text/plain\r\n\r\n`,
      o.bytes,
      `\r\n--${boundary}--\r\n`,
    ),
    duplex: 'half',
  };
}

async function one(kind) {
  const [path, init] = requestOf[kind]();
  try {
    const res = await fetch(o.url + path, init);
    const text = await res.text();
    if (res.status === 413 && res.headers.get('content-type')?.startsWith('application/problem+json'))
      return '413';
    return `${res.status} ${text.slice(0, 40)}`;
  } catch (err) {
    return err.cause?.code ?? err.cause?.message ?? String(err);
  }
}

const results = {};
for (const kind of o.kinds) {
  const counts = {};
  for (let i = 0; i < o.requests; i++) {
    const outcome = await one(kind);
    counts[outcome] = (counts[outcome] ?? 0) + 1;
  }
  results[kind] = counts;
}
process.stdout.write(JSON.stringify(results));
