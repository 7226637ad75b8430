// Write coalescing for WebSocket connections (bench/RESULTS.md, issue 19's realtime target).
//
// Engine.IO sends each packet as one WebSocket frame and `ws` writes each frame with a system
// call of its own (a `writev` of the frame's header and payload). A broadcast to a room of 100
// sockets is 100 calls, whatever happens next, and at 20,000 deliveries/s the service's thread
// spent a third of its time in `writev`.
//
// Here an Engine.IO socket on the WebSocket transport does not send a packet the moment it is
// queued: the socket is marked due and every due socket is flushed once, in a `setImmediate`
// (the check phase right after the poll phase that queued the packets). Each flush corks the
// connection's TCP socket around Engine.IO's own flush, so the frames queued for one connection
// in one turn of the event loop leave in one `writev`, in the order they were queued. On an idle
// server a turn queues one frame and the wait is that of reaching the check phase (no timer);
// on a busy one, a turn queues more and each costs less. Other transports (HTTP long-polling)
// are left as they are. Engine.IO's own logic decides what is sent and when it is writable: the
// deferred flush is its own `flush`, called later; closing waits for it as it waits for a write.
// Neither library offers an extension point for this, so it stays in this file alone, checked on
// engine.io 6.6.x and ws 8.x: coalesce.test.ts fails on other versions, and fails if one turn's
// frames stop leaving in one write.
import type { Duplex } from 'node:stream';
import type { Server } from 'socket.io';

/** The parts of an Engine.IO socket (engine.io's `Socket`) this module touches. */
interface EngineSocket {
  writeBuffer: unknown[];
  transport: {
    name: string;
    writable: boolean;
    /** The `ws` WebSocket of the WebSocket transport; its `_socket` is the TCP socket. */
    socket?: { _socket?: Duplex };
  };
  flush(): void;
}

/** Makes every Engine.IO connection of `io` from now on coalesce its WebSocket writes per turn
 * of the event loop. */
export function coalesceWebSocketWrites(io: Server): void {
  let due = new Map<EngineSocket, () => void>();
  let scheduled = false;

  const flushDue = () => {
    scheduled = false;
    const sockets = due;
    due = new Map();
    for (const [socket, flushNow] of sockets) {
      // The TCP socket under `ws` (cork nests: ws's own cork and uncork per frame stay inside).
      const tcp = socket.transport.name === 'websocket' ? socket.transport.socket?._socket : undefined;
      tcp?.cork();
      try {
        flushNow();
      } finally {
        tcp?.uncork();
      }
    }
  };

  io.engine.on('connection', (socket: EngineSocket) => {
    // The prototype's flush, bound: what Engine.IO would have done now.
    const flushNow = socket.flush.bind(socket);
    socket.flush = () => {
      if (socket.transport.name !== 'websocket') {
        flushNow();
        return;
      }
      // Nothing to send, or a write in progress (whose end calls flush again): nothing to do.
      if (socket.writeBuffer.length === 0 || !socket.transport.writable) return;
      due.set(socket, flushNow);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flushDue);
      }
    };
  });
}
