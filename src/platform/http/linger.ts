// A request answered before its body was read to the end (a 413 over a body limit, a 401 before an
// upload's bytes): the client may still be sending. Closing then makes the kernel reset the
// connection over the unread bytes, and a client still writing sees EPIPE or ECONNRESET instead of
// the answer, often before it has read it. So the connection stays open after the answer, the
// rest of the body is read and dropped, and only a client that goes on past a bound (bytes or
// time) is cut off: the lingering close of nginx, keeping the connection usable when the body ends.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export interface LingerLimits {
  /** Bytes of the rest of a body read and dropped after the answer, at most. */
  maxBytes: number;
  /** Time after the answer within which the body must end. */
  maxMs: number;
}

/** 16 MiB or 10 s: a client that reads its answer stops sending within a round trip or two (Node's
 * fetch, curl); one that does not is cut off within either bound. */
export const DEFAULT_LINGER: LingerLimits = { maxBytes: 16 * 1024 * 1024, maxMs: 10_000 };

export function registerLingeringClose(app: FastifyInstance, limits: LingerLimits = DEFAULT_LINGER): void {
  app.addHook('onSend', async (req, reply) => {
    const body = req.raw;
    if (body.complete || body.socket.destroyed) return;
    // Fastify marks the answer to a body over its limit `Connection: close`, so Node would close
    // the socket as soon as the answer is written, while the client sends. The framing
    // (Content-Length or chunked) is still known, so the connection may go on once the rest is read.
    if (reply.statusCode === 413) reply.removeHeader('connection');
    drain(body, limits);
  });
}

/** Reads and drops the rest of `body` from now on, and destroys its socket past either bound.
 * Started before the answer is written: Node would otherwise dump a body nobody reads once the
 * answer is written, and a dumped body's bytes can no longer be counted. */
function drain(body: IncomingMessage, limits: LingerLimits): void {
  const socket = body.socket;
  let dropped = 0;
  const cut = () => socket.destroy();
  const timer = setTimeout(cut, limits.maxMs);
  timer.unref();
  const count = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > limits.maxBytes) cut();
  };
  const done = () => {
    clearTimeout(timer);
    body.off('data', count);
    body.off('end', done);
    socket.off('close', done);
  };
  body.on('data', count);
  body.once('end', done);
  socket.once('close', done);
  // A body a parser stopped reading (a multipart limit) may be paused: read the rest too.
  body.resume();
}
