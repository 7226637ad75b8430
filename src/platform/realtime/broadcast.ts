// Broadcasts that reach this node's own sockets at once and the other nodes' through the adapter.
// socket.io's cluster adapters (here the PostgreSQL one: LISTEN/NOTIFY) deliver a broadcast to
// the node's own sockets only once its NOTIFY is answered, and under load behind every NOTIFY
// queued before it: deliveries were half a second behind their commits at 20,000 a second
// (bench/RESULTS.md, 2026-11-25). Here a broadcast goes to this node's sockets at once
// (`nsp.local`) and to the other nodes as a server-side emit (`serverSideEmit`), which each node
// delivers to its own sockets as it arrives. Every node so gets one node's broadcasts in the order
// they were made: here as they are made, elsewhere in the order of their NOTIFYs. Only socket.io's
// public API is used; with the in-memory adapter (one process) there is no other node.
import type { Namespace } from 'socket.io';
import { ClusterAdapter } from 'socket.io-adapter';

/** The server-side event that carries a broadcast to the other nodes. */
const RELAY = 'relay:broadcast';

/** The payload of an event of the map E (each of this service's events has one). */
type Payload<F> = F extends (payload: infer P) => void ? P : never;

/** A loosely typed emit: the typed one cannot be called with a generic event name. */
interface Emitter {
  emit(event: string, payload: unknown): boolean;
}

/** The broadcast of `nsp`: `send(rooms, event, payload)` reaches every socket in any of the rooms,
 * on every node, once each. */
export function broadcaster<E extends object>(
  nsp: Namespace<Record<string, never>, E>,
): <K extends keyof E & string>(rooms: string | string[], event: K, payload: Payload<E[K]>) => void {
  const deliver = (rooms: string | string[], event: string, payload: unknown) =>
    (nsp.local.to(rooms) as unknown as Emitter).emit(event, payload);
  // Another node's broadcast, to this node's sockets.
  nsp.on(RELAY, deliver);
  return (rooms, event, payload) => {
    deliver(rooms, event, payload);
    if (nsp.adapter instanceof ClusterAdapter) nsp.serverSideEmit(RELAY, rooms, event, payload);
  };
}
