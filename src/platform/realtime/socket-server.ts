// Socket.IO on the same HTTP server. The default namespace authenticates with the access token at
// connect (contract: "Real time"); a bad or missing token fails the connection with a
// problem object as `connect_error` data. When the token expires the server sends `chatError`
// with `token_expired` and disconnects. Other namespaces (`/observer`) are added by their modules
// through `authenticateSocket`.
import type { Server as HttpServer } from 'node:http';
import { Server, type Namespace } from 'socket.io';
import type { Logger } from 'pino';
import { AppError, makeProblem, toProblem, type Problem } from '../http/problem.js';
import { userFromToken, type AuthDeps, type UserPrincipal } from '../http/auth.js';

export interface SocketData {
  user: UserPrincipal;
  tokenExp: number;
}

/** A connect_error carrying the problem object as `data`. */
export function connectError(problem: Problem): Error & { data: Problem } {
  const err = new Error(problem.detail) as Error & { data: Problem };
  err.data = problem;
  return err;
}

/** Namespace middleware: verifies `auth.token`, fills socket.data, schedules the expiry. */
export function authenticateSocket(nsp: Namespace, deps: AuthDeps, log: Logger) {
  nsp.use((socket, next) => {
    const token = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string' || token.length === 0) {
      next(connectError(makeProblem('unauthenticated', 'Connect with auth: { token: "<access token>" }')));
      return;
    }
    userFromToken(deps, token).then(
      (user) => {
        (socket.data as SocketData).user = user;
        (socket.data as SocketData).tokenExp = user.exp;
        next();
      },
      (err: unknown) => next(connectError(err instanceof AppError ? err.toProblem() : toProblem(err))),
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
    log.debug({ nsp: nsp.name, userId: data.user.id }, 'socket connected');
  });
}

export function createSocketServer(
  httpServer: HttpServer,
  deps: AuthDeps,
  log: Logger,
  maxPayloadBytes: number,
): Server {
  const io = new Server(httpServer, {
    path: '/socket.io',
    maxHttpBufferSize: maxPayloadBytes,
    cors: { origin: true, credentials: true },
    serveClient: false,
  });
  authenticateSocket(io.of('/'), deps, log);
  return io;
}
