// `trainingProgress` on the default namespace: each socket joins its user's room, and every
// committed change of a training job is sent to the room of the admin who started it. On
// PostgreSQL the Socket.IO adapter carries it to that admin's sockets on other nodes (the job may
// run on a worker node).
import type { Namespace, Server } from 'socket.io';
import type { EventBus } from '../../platform/events/bus.js';
import { broadcaster } from '../../platform/realtime/broadcast.js';
import type { SocketData } from '../../platform/realtime/socket-server.js';
import type { TrainingProgress } from './training.schemas.js';

export interface TrainingServerEvents {
  trainingProgress: (progress: TrainingProgress) => void;
}

export const userRoom = (userId: number) => `user:${userId}`;

export function trainingSockets(io: Server, { bus }: { bus: EventBus }) {
  // The server is shared by namespaces and untyped; this event's map is the module's.
  const nsp = io.of('/') as unknown as Namespace<Record<string, never>, TrainingServerEvents>;
  nsp.on('connection', (socket) => {
    void socket.join(userRoom((socket.data as SocketData).user.id));
  });
  const send = broadcaster(nsp);
  bus.on('training.progress', ({ userId, progress }) => {
    send(userRoom(userId), 'trainingProgress', progress);
  });
}
