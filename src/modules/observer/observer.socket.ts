// The `/observer` namespace (spec: "Events", observer namespace; contract: "Real time"):
// connect with `auth: { token, observerId }`; each socket joins its observer's room; committed
// timeline events, activity changes, reflections and summaries are broadcast to that room only. On Postgres the Socket.IO
// adapter carries a broadcast to the sockets held by other nodes.
import type { Namespace, Server as SocketServer } from 'socket.io';
import type { EventBus } from '../../platform/events/bus.js';
import { AppError, toProblem, makeProblem, safeParseInput } from '../../platform/http/problem.js';
import { connectError, type SocketData } from '../../platform/realtime/socket-server.js';
import type { InstancesService } from '../timeline/index.js';
import { observerHandshake } from './observer.schemas.js';
import type { ObserverServerEvents } from './observer.wire.js';

export type { ObserverServerEvents } from './observer.wire.js';

type ObserverSocketData = SocketData & { observerId: number };

export const OBSERVER_NAMESPACE = '/observer';
export const observerRoom = (observerId: number) => `observer:${observerId}`;

export type ObserverNamespace = Namespace<Record<string, never>, ObserverServerEvents>;

export interface ObserverSocketOptions {
  instances: Pick<InstancesService, 'authorizeWatcher'>;
  bus: EventBus;
  /** Admits a namespace's sockets by their access token (the same check as the main namespace). */
  authenticate: (nsp: Namespace) => void;
}

export function observerSockets(io: SocketServer, { instances, bus, authenticate }: ObserverSocketOptions) {
  const nsp: ObserverNamespace = io.of(OBSERVER_NAMESPACE);
  authenticate(nsp);
  nsp.use((socket, next) => {
    const parsed = safeParseInput(observerHandshake, socket.handshake.auth ?? {}, 'auth');
    if (!parsed.success) {
      next(
        connectError(
          makeProblem('validation_failed', 'Connect with auth: { token, observerId }', {
            errors: parsed.errors,
          }),
        ),
      );
      return;
    }
    const user = (socket.data as SocketData).user;
    instances.authorizeWatcher(user, parsed.data.observerId).then(
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

  bus.on('timeline.recorded', (event) => {
    nsp.to(observerRoom(event.observerId)).emit('timeline_update', event);
  });
  bus.on('instance.activity', ({ observerId, activity }) => {
    nsp.to(observerRoom(observerId)).emit('instance_activity', activity);
  });
  bus.on('observer.summary', ({ observerId, summary }) => {
    nsp.to(observerRoom(observerId)).emit('summary_update', summary);
  });
  bus.on('observer.reflection', ({ observerId, reflection }) => {
    nsp.to(observerRoom(observerId)).emit('reflection_generated', reflection);
  });
}
