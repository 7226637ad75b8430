// One Socket.IO test client for every test file: connects (rejecting with the connect_error's
// problem object), records every event it receives, and waits for events as they arrive (a
// signal, not a sleep).
import { io, type Socket } from 'socket.io-client';

export interface RecordedEvent {
  name: string;
  payload: any;
}

export interface TestSocket {
  socket: Socket;
  /** Every event received so far, in order. */
  events: RecordedEvent[];
  /** The first event named `name` (matching `match`) received at or after index `from`,
   * waiting for it when it has not arrived yet. */
  next(
    name: string | string[],
    opts?: { from?: number; match?: (payload: any) => boolean },
  ): Promise<RecordedEvent>;
  /** Emits with an ack, then waits for the event that ends the exchange (`until`, or a
   * `chatError`); returns the ack and the events received since the emit. */
  send(event: string, payload: unknown, until?: string): Promise<{ ack: any; events: RecordedEvent[] }>;
  close(): void;
}

export interface ConnectOptions {
  /** Namespace, e.g. '/observer' (default: the main namespace). */
  namespace?: string;
  auth?: Record<string, unknown>;
  /** Failsafe for acks and waits (default 20 s). */
  timeoutMs?: number;
}

const open = new Set<Socket>();

/** Connects to the server at `url`; rejects with the connect_error's data (the problem object). */
export async function connectSocket(url: string, opts: ConnectOptions = {}): Promise<TestSocket> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const socket = io(url + (opts.namespace ?? ''), {
    auth: opts.auth ?? {},
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
  });
  open.add(socket);
  socket.on('disconnect', () => open.delete(socket));
  const events: RecordedEvent[] = [];
  const waiters = new Set<() => void>();
  socket.onAny((name: string, payload: unknown) => {
    events.push({ name, payload });
    for (const w of [...waiters]) w();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', (err: Error & { data?: unknown }) => {
      open.delete(socket);
      socket.close();
      // The problem object the server sent (what tests assert on), or the transport's Error.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      reject(err.data ?? err);
    });
  });

  function next(
    name: string | string[],
    { from = 0, match }: { from?: number; match?: (payload: any) => boolean } = {},
  ): Promise<RecordedEvent> {
    const names = Array.isArray(name) ? name : [name];
    const find = () => events.slice(from).find((e) => names.includes(e.name) && (!match || match(e.payload)));
    const found = find();
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no ${names.join(' or ')} event received (${events.length} events seen)`));
      }, timeoutMs);
      function check() {
        const e = find();
        if (!e) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(e);
      }
      waiters.add(check);
    });
  }

  return {
    socket,
    events,
    next,
    async send(event, payload, until = 'assistantIdle') {
      const from = events.length;
      const ack = await socket.timeout(timeoutMs).emitWithAck(event, payload);
      await next([until, 'chatError'], { from });
      return { ack, events: events.slice(from) };
    },
    close() {
      open.delete(socket);
      socket.close();
    },
  };
}

/** Closes every socket still open (for afterAll). */
export function closeSockets(): void {
  for (const s of open) s.close();
  open.clear();
}
