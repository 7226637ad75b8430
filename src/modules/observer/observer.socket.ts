// The `/observer` namespace (spec: "Events", observer namespace; contract: "Real time"):
// connect with `auth: { token, observerId }`; each socket joins its observer's room. A committed
// timeline event or activity change goes to the rooms of its observer and of every observer above
// it, up to the root (the timeline module's observer chain), since their timelines hold it
// (contract: "Observer"); one broadcast names them all, so a socket in several of those rooms
// (watching a parent and its child) gets it once, and on PostgreSQL the Socket.IO adapter carries
// that one broadcast, rooms and all, to the sockets held by other nodes (platform/realtime/
// broadcast.ts: this node's sockets get it at once). Reflections and summaries
// are an observer's own and go to its room only.
import type { Namespace, Server as SocketServer, Socket } from 'socket.io';
import { ClusterAdapter } from 'socket.io-adapter';
import type { EventBus } from '../../platform/events/bus.js';
import { AppError, toProblem, makeProblem, safeParseInput } from '../../platform/http/problem.js';
import { broadcaster } from '../../platform/realtime/broadcast.js';
import { connectError, type SocketData } from '../../platform/realtime/socket-server.js';
import type { InstancesService } from '../timeline/index.js';
import { observerHandshake } from './observer.schemas.js';
import type { ObserverServerEvents } from './observer.wire.js';

export type { ObserverServerEvents } from './observer.wire.js';

type ObserverSocketData = SocketData & { observerIds: number[] };

export const OBSERVER_NAMESPACE = '/observer';
export const observerRoom = (observerId: number) => `observer:${observerId}`;

export type ObserverNamespace = Namespace<Record<string, never>, ObserverServerEvents>;

export interface ObserverSocketOptions {
  instances: Pick<InstancesService, 'authorizeWatcher'>;
  bus: EventBus;
  /** Admits a namespace's sockets by their access token (the same check as the main namespace);
   * a socket whose account changed and that is still admitted is handed to `rejudged`. */
  authenticate: (nsp: Namespace, rejudged: (socket: Socket) => void) => void;
}

/** The server-side event that asks every node to judge again who watches an instance. */
const RECHECK = 'observer:recheck';

export function observerSockets(io: SocketServer, { instances, bus, authenticate }: ObserverSocketOptions) {
  const nsp: ObserverNamespace = io.of(OBSERVER_NAMESPACE);
  // A socket keeps watching only while it may: its account changed (a demotion) or its observer
  // was given to another owner, every observer it watches is admitted again, or it is closed.
  const recheck = (socket: Socket) => {
    const data = socket.data as ObserverSocketData;
    if (!data.observerIds) return;
    void Promise.allSettled(data.observerIds.map((id) => instances.authorizeWatcher(data.user, id))).then(
      (answers) => {
        const refused = answers.find((a) => a.status === 'rejected');
        if (!refused) return;
        const err: unknown = refused.reason;
        socket.emit('chatError', err instanceof AppError ? err.toProblem() : toProblem(err));
        socket.disconnect(true);
      },
    );
  };
  const recheckWatchers = (instanceId: number) => {
    for (const socket of nsp.sockets.values())
      if ((socket.data as ObserverSocketData).observerIds?.includes(instanceId)) recheck(socket);
  };
  authenticate(nsp, recheck);
  // Another node's owner change, for this node's sockets (the bus is the process's own).
  nsp.on(RECHECK, (instanceId: number) => recheckWatchers(instanceId));
  bus.on('instance.owner_changed', ({ instanceId }) => {
    recheckWatchers(instanceId);
    if (nsp.adapter instanceof ClusterAdapter) nsp.serverSideEmit(RECHECK, instanceId);
  });
  nsp.use((socket, next) => {
    const parsed = safeParseInput(observerHandshake, socket.handshake.auth ?? {}, 'auth');
    if (!parsed.success) {
      next(
        connectError(
          makeProblem('validation_failed', 'Connect with auth: { token, observerId } (or observerIds)', {
            errors: parsed.errors,
          }),
        ),
      );
      return;
    }
    const user = (socket.data as SocketData).user;
    // Every observer named must be admitted; one refusal refuses the connection (the first in the
    // order named, whichever answered first).
    Promise.allSettled(parsed.data.map((id) => instances.authorizeWatcher(user, id)))
      .then((answers) => {
        const refused = answers.find((a) => a.status === 'rejected');
        if (refused) throw refused.reason;
      })
      .then(
        () => {
          (socket.data as ObserverSocketData).observerIds = parsed.data;
          next();
        },
        (err: unknown) => next(connectError(err instanceof AppError ? err.toProblem() : toProblem(err))),
      );
  });

  nsp.on('connection', (socket) => {
    void socket.join((socket.data as ObserverSocketData).observerIds.map(observerRoom));
  });

  const send = broadcaster(nsp);
  bus.on('timeline.recorded', ({ event, observerIds }) => {
    later(() => send(observerIds.map(observerRoom), 'timeline_update', event));
  });
  bus.on('instance.activity', ({ observerIds, activity }) => {
    later(() => send(observerIds.map(observerRoom), 'instance_activity', activity));
  });
  bus.on('observer.summary', ({ observerId, summary }) => {
    later(() => send(observerRoom(observerId), 'summary_update', summary));
  });
  bus.on('observer.reflection', ({ observerId, reflection }) => {
    later(() => send(observerRoom(observerId), 'reflection_generated', reflection));
  });
}

/** A broadcast sent once the current turn of the event loop is done: the request whose commit
 * published it is answered first, rather than after a write to every socket of this node that
 * watches the observer (a hundred for a busy one; a game server's ingest waited for them all).
 * Broadcasts keep their order (callbacks run in the order queued), and this namespace sends
 * nothing but broadcasts, so nothing overtakes them. A broadcast that throws (the server closing
 * meanwhile) is dropped, as an after-commit listener's failure is. */
function later(broadcast: () => void): void {
  setImmediate(() => {
    try {
      broadcast();
    } catch {
      // Nothing to deliver to once the server is closed.
    }
  });
}
