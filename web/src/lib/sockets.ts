// Socket.IO with the server's typed event maps. The token is read at every (re)connect; when
// the server refuses or drops the connection for an expired token, the token is refreshed and
// the socket reconnects with the new one.
import { io, type Socket } from 'socket.io-client';
import type { ChatClientEvents, ChatServerEvents } from '../../../src/modules/chat/chat.events';
import type { ObserverServerEvents } from '../../../src/modules/observer/observer.wire';
import { tokens, type Schemas } from '../api/client';

export type ChatSocket = Socket<ChatServerEvents, ChatClientEvents>;
export type ObserverSocket = Socket<ObserverServerEvents, Record<string, never>>;
/** The main namespace as the training jobs' progress comes on it (`trainingProgress`, the
 * training module's event: its job's fields as GET /api/training/jobs/{jobId} answers them). */
export type TrainingProgress = Pick<
  Schemas['TrainingJob'],
  'kind' | 'status' | 'stage' | 'progress' | 'memoryIds'
> & {
  jobId: string;
};
export type TrainingSocket = Socket<
  { trainingProgress: (p: TrainingProgress) => void },
  Record<string, never>
>;

function withRefresh<S extends Socket>(socket: S): S {
  socket.on('connect_error', (err: Error & { data?: { code?: string } }) => {
    if (err.data?.code === 'token_expired')
      void tokens.refresh().then((t) => {
        if (t) socket.connect();
      });
  });
  return socket;
}

export function chatSocket(): ChatSocket {
  const socket: ChatSocket = io({
    autoConnect: false,
    transports: ['websocket'],
    auth: (cb) => void tokens.accessToken().then((token) => cb({ token })),
  });
  socket.on('chatError', (e) => {
    if (e.code === 'token_expired')
      void tokens.refresh().then((t) => {
        if (t) socket.connect();
      });
  });
  return withRefresh(socket);
}

export function observerSocket(observerId: number): ObserverSocket {
  const socket: ObserverSocket = io('/observer', {
    autoConnect: false,
    transports: ['websocket'],
    auth: (cb) => void tokens.accessToken().then((token) => cb({ token, observerId })),
  });
  return withRefresh(socket);
}

export function trainingSocket(): TrainingSocket {
  const socket: TrainingSocket = io({
    autoConnect: false,
    transports: ['websocket'],
    auth: (cb) => void tokens.accessToken().then((token) => cb({ token })),
  });
  return withRefresh(socket);
}
