// The `/observer` namespace (spec: "Events", observer namespace; API-CONTRACT.md "Real time"):
// connect with `auth: { token, observerId }`; each socket joins its observer's room; committed
// timeline events and activity changes are broadcast to that room only. On Postgres the Socket.IO
// adapter carries a broadcast to the sockets held by other nodes.
import type { Server as SocketServer } from 'socket.io';
import type { Deps } from '../../deps.js';
import { AppError, toProblem, zodErrors, makeProblem } from '../../platform/http/problem.js';
import { authenticateSocket, connectError, type SocketData } from '../../platform/realtime/socket-server.js';
import { observerHandshake } from './observer.schemas.js';

type ObserverSocketData = SocketData & { observerId: number };

export const OBSERVER_NAMESPACE = '/observer';
export const observerRoom = (observerId: number) => `observer:${observerId}`;

export function observerSockets(io: SocketServer, deps: Deps) {
  const nsp = io.of(OBSERVER_NAMESPACE);
  authenticateSocket(
    nsp,
    {
      verifyAccessToken: (t) => deps.tokens.verify(t),
      verifyApiKey: async () => null,
      adminUserIds: deps.config.adminUserIds,
    },
    deps.log,
  );
  nsp.use((socket, next) => {
    const parsed = observerHandshake.safeParse(socket.handshake.auth ?? {});
    if (!parsed.success) {
      next(
        connectError(
          makeProblem('validation_failed', 'Connect with auth: { token, observerId }', {
            errors: zodErrors(parsed.error, 'auth'),
          }),
        ),
      );
      return;
    }
    const user = (socket.data as SocketData).user;
    deps.services.observer.authorizeWatcher(user, parsed.data.observerId).then(
      () => {
        (socket.data as ObserverSocketData).observerId = parsed.data.observerId;
        next();
      },
      (err: unknown) => next(connectError(err instanceof AppError ? err.toProblem() : toProblem(err))),
    );
  });

  nsp.on('connection', (socket) => {
    void socket.join(observerRoom((socket.data as ObserverSocketData).observerId));
  });

  deps.bus.on('timeline.recorded', (event) => {
    nsp.to(observerRoom(event.observerId)).emit('timeline_update', event);
  });
  deps.bus.on('instance.activity', ({ observerId, activity }) => {
    nsp.to(observerRoom(observerId)).emit('instance_activity', activity);
  });
}
