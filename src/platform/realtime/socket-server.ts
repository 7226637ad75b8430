// Socket.IO on the same HTTP server. The default namespace authenticates with the access token at
// connect (contract: "Real time"); a bad or missing token fails the connection with a
// problem object as `connect_error` data. When the token expires the server sends `chatError`
// with `token_expired` and disconnects; when the account is deleted or the token's session ends,
// it sends `chatError` with `unauthenticated` and disconnects, and a role change applies to the
// sockets already connected (ARCHITECTURE.md, "Token validity"). Other namespaces (`/observer`) are added by their modules
// through `authenticateSocket`. What a connection may send before it authenticates, and for how
// long, is bounded by preauth.ts.
import type { Server as HttpServer } from 'node:http';
import { Server, type Namespace, type Socket } from 'socket.io';
import type { Logger } from 'pino';
import { AppError, makeProblem, toProblem, type Problem } from '../http/problem.js';
import { principalOf, type AuthDeps, type UserPrincipal } from '../http/auth.js';
import type { AccessClaims } from '../security/jwt.js';
import { originAllowed } from '../http/cors.js';
import { authenticated, guardPreAuth } from './preauth.js';

export interface SocketData {
  user: UserPrincipal;
  tokenExp: number;
  claims: AccessClaims;
}

export interface SocketAuthDeps extends AuthDeps {
  /** Called with each account id whose state may have changed. */
  onAccountChange(listener: (id: number) => void): () => void;
  /** Sockets one account may hold open on a namespace in this process (SOCKETS_PER_USER). */
  socketsPerUser: number;
}

/** A connect_error carrying the problem object as `data`. */
export function connectError(problem: Problem): Error & { data: Problem } {
  const err = new Error(problem.detail) as Error & { data: Problem };
  err.data = problem;
  return err;
}

/** Namespace middleware: verifies `auth.token`, fills socket.data, schedules the expiry. A socket
 * still admitted after its account changed is handed to `rejudged` (a namespace whose admission
 * depends on more than the account, `/observer`, checks it again). */
export function authenticateSocket(
  nsp: Namespace,
  deps: SocketAuthDeps,
  log: Logger,
  rejudged?: (socket: Socket) => void,
) {
  const asProblem = (err: unknown) => (err instanceof AppError ? err.toProblem() : toProblem(err));
  nsp.use((socket, next) => {
    const token = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string' || token.length === 0) {
      next(connectError(makeProblem('unauthenticated', 'Connect with auth: { token: "<access token>" }')));
      return;
    }
    (async () => {
      const claims = deps.verifyAccessToken(token);
      const user = principalOf(claims, await deps.accountState(claims.id), deps.adminUserIds);
      Object.assign(socket.data as SocketData, { user, tokenExp: user.exp, claims });
      // Counted from here, not from its connection: sockets admitted together count each other.
      const mine = byUser.get(user.id) ?? new Set<Socket>();
      if (mine.size >= deps.socketsPerUser)
        throw new AppError(
          'rate_limited',
          `At most ${deps.socketsPerUser} sockets per account at once; close one first`,
          { limit: deps.socketsPerUser },
        );
      byUser.set(user.id, mine.add(socket));
      const leave = () => {
        mine.delete(socket);
        if (mine.size === 0 && byUser.get(user.id) === mine) byUser.delete(user.id);
      };
      // Its connection's close covers a socket that never got to connect.
      socket.conn.once('close', leave);
      socket.once('disconnect', leave);
    })().then(
      () => next(),
      (err: unknown) => next(connectError(asProblem(err))),
    );
  });

  // The connected (and admitted) sockets by account, judged again whenever the account changes.
  const byUser = new Map<number, Set<Socket>>();
  // The listener lives as long as the account states it listens to (the process's).
  deps.onAccountChange((id) => {
    const sockets = byUser.get(id);
    if (!sockets) return;
    void Promise.resolve(deps.accountState(id)).then(
      (state) => {
        for (const socket of sockets) {
          const data = socket.data as SocketData;
          try {
            data.user = principalOf(data.claims, state, deps.adminUserIds);
          } catch (err) {
            socket.emit('chatError', asProblem(err));
            socket.disconnect(true);
            continue;
          }
          rejudged?.(socket);
        }
      },
      (err: unknown) => log.warn({ err, userId: id }, 'socket account check failed'),
    );
  });

  nsp.on('connection', (socket) => {
    const data = socket.data as SocketData;
    const ms = data.tokenExp * 1000 - Date.now();
    // setTimeout's ceiling is ~24.8 days; access tokens live far shorter.
    const timer = setTimeout(
      () => {
        socket.emit('chatError', {
          ...makeProblem('token_expired', 'The access token has expired; reconnect with a fresh one'),
        });
        socket.disconnect(true);
      },
      Math.max(0, Math.min(ms, 2 ** 31 - 1)),
    );
    socket.on('disconnect', () => clearTimeout(timer));
    authenticated(nsp.server, socket.conn);
    log.debug({ nsp: nsp.name, userId: data.user.id }, 'socket connected');
  });
}

export function createSocketServer(
  httpServer: HttpServer,
  deps: SocketAuthDeps,
  log: Logger,
  limits: {
    /** The largest message of an authenticated connection. */
    maxPayloadBytes: number;
    /** A connection that has joined no namespace (authenticated) by then is closed. */
    authTimeoutMs: number;
  },
  origins: { allowed: readonly string[]; publicUrl: string } = { allowed: [], publicUrl: 'http://localhost' },
  /** False once the node drains: a new connection is refused (HTTP 403), and the client tries
   * again (behind a balancer, on another node). */
  accepting: () => boolean = () => true,
): Server {
  const io = new Server(httpServer, {
    path: '/socket.io',
    maxHttpBufferSize: limits.maxPayloadBytes,
    connectTimeout: limits.authTimeoutMs,
    // CORS_ORIGINS, as for REST (platform/http/cors.ts): CORS headers for the listed origins only,
    // and a handshake from any other page's origin refused (a WebSocket is not subject to CORS).
    ...(origins.allowed.length > 0 ? { cors: { origin: [...origins.allowed], credentials: true } } : {}),
    allowRequest: (req, callback) => {
      if (!accepting()) return callback('this node is shutting down', false);
      const ok = originAllowed(req.headers.origin, req.headers.host, origins.allowed, origins.publicUrl);
      callback(ok ? null : 'origin not allowed', ok);
    },
    serveClient: false,
  });
  guardPreAuth(io);
  authenticateSocket(io.of('/'), deps, log);
  const open = new Set<EngineConnection>();
  io.engine.on('connection', (conn: EngineConnection) => {
    open.add(conn);
    conn.once('close', () => open.delete(conn));
  });
  connections.set(io, open);
  return io;
}

/** An Engine.IO connection (one per client, shared by its namespaces), as far as used here. */
interface EngineConnection {
  close(): void;
  once(event: 'close', listener: () => void): void;
}
const connections = new WeakMap<Server, Set<EngineConnection>>();

/** Closes every client connection of this server once what it was sent is written: the client
 * sees a lost transport ("transport close") and reconnects, where a disconnect packet would tell
 * it to stay away. */
export function closeConnections(io: Server): void {
  for (const conn of connections.get(io) ?? []) conn.close();
}
