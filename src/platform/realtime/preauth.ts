// What a Socket.IO connection may send before it authenticates. The engine's limit
// (maxHttpBufferSize, 30 × BODY_LIMIT) is sized for an authenticated `chatMessage` carrying four
// base64 images; before authentication a client sends only its CONNECT packets (the `auth` with
// the access token, an observer id) and pongs, a few hundred bytes each. Without a bound of its
// own, a connection that never authenticates could make the server buffer and parse a frame of
// 30 MiB for nothing. So, until one of its namespace sockets is admitted (`authenticated`, called
// by authenticateSocket), a connection may send PREAUTH_BYTES in all:
// - WebSocket from the start: the bytes read from its TCP socket are counted by a listener beside
//   ws's own; past the budget the socket is destroyed, so ws has held at most the budget and one
//   read of the socket (64 KiB).
// - HTTP long-polling: each POST is counted by its Content-Length before its body is read (a POST
//   without one counts as over); past the budget it is refused (400, its HTTP connection closed)
//   and the session closed.
// - A polling session's upgrade to WebSocket waits until the session authenticates (or fails
//   when it closes): a WebSocket is opened for an authenticated session only.
// The time to authenticate is Socket.IO's own `connectTimeout` (SOCKET_AUTH_TIMEOUT_MS): a
// connection that has joined no namespace by then is closed.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from 'socket.io';

/** Bytes a connection may send before it authenticates: its CONNECT packets, many times over. */
export const PREAUTH_BYTES = 16 * 1024;

/** An Engine.IO connection, as far as used here. */
interface EngineConnection {
  request: IncomingMessage;
  transport: { name: string };
  close(): void;
  once(event: 'close', listener: () => void): void;
}

interface Session {
  conn: EngineConnection;
  authenticated: boolean;
  /** Bytes received so far, before authentication. */
  bytes: number;
  /** Upgrade requests waiting for the session to authenticate: their middleware's `next`. */
  upgrades: ((err?: Error) => void)[];
  stopCounting?: () => void;
}

/** Each server's sessions by their engine connection (a namespace socket's `conn`). */
const guards = new WeakMap<Server, WeakMap<object, Session>>();

/** Bounds what the connections of `io` receive before they authenticate (see the file's head). */
export function guardPreAuth(io: Server, budget = PREAUTH_BYTES): void {
  // Sessions by their id (the `sid` of each request after the handshake): the engine keeps its
  // connections' ids to itself, so they are made here (the engine's `generateId`, 15 random bytes
  // as the engine's own) and known by the handshake's request.
  const sessions = new Map<string, Session>();
  const byConn = new WeakMap<object, Session>();
  const ids = new WeakMap<IncomingMessage, string>();
  guards.set(io, byConn);
  io.engine.generateId = (req: IncomingMessage) => {
    const id = randomBytes(15).toString('base64url');
    ids.set(req, id);
    return id;
  };

  io.engine.on('connection', (conn: EngineConnection) => {
    const id = ids.get(conn.request);
    // Every session's id is made above; one that was not is not let through unguarded.
    if (id === undefined) return conn.close();
    const session: Session = { conn, authenticated: false, bytes: 0, upgrades: [] };
    sessions.set(id, session);
    byConn.set(conn, session);
    // The engine's `connection` comes once ws reads the socket: this listener, beside ws's, counts
    // each read as ws takes it.
    if (conn.transport.name === 'websocket') {
      const socket = conn.request.socket;
      const count = (chunk: Buffer) => {
        session.bytes += chunk.length;
        if (session.bytes > budget) socket.destroy();
      };
      socket.on('data', count);
      session.stopCounting = () => socket.off('data', count);
    }
    conn.once('close', () => {
      sessions.delete(id);
      session.stopCounting?.();
      for (const next of session.upgrades.splice(0)) next(new Error('closed before it authenticated'));
    });
  });

  // Every HTTP request of the engine (polling and upgrades) passes here before the engine reads it.
  io.engine.use((req: IncomingMessage, res: ServerResponse, next: (err?: Error) => void) => {
    const sid = new URL(req.url ?? '/', 'http://socket.io').searchParams.get('sid');
    const session = sid === null ? undefined : sessions.get(sid);
    // A handshake, a session already authenticated, or an unknown one (the engine refuses it).
    if (!session || session.authenticated) return next();
    if (req.headers.upgrade !== undefined) {
      session.upgrades.push(next);
      return;
    }
    if (req.method !== 'POST') return next();
    const length = Number(req.headers['content-length'] ?? NaN);
    session.bytes += Number.isSafeInteger(length) ? length : Infinity;
    if (session.bytes <= budget) return next();
    // Answered (400) without reading the body; the client has nothing more to say.
    res.setHeader('connection', 'close');
    next(new Error('too much sent before authenticating'));
    session.conn.close();
  });
}

/** `conn`, one of whose sockets was just admitted to its namespace, has authenticated: its limit is
 * the engine's from now on, and its upgrade, if one waits, goes ahead. */
export function authenticated(io: Server, conn: object): void {
  const session = guards.get(io)?.get(conn);
  if (!session || session.authenticated) return;
  session.authenticated = true;
  session.stopCounting?.();
  for (const next of session.upgrades.splice(0)) next();
}
