// Broadcasts that reach this node's own sockets without waiting for their NOTIFY. socket.io-adapter
// offers no option for it, so its ClusterAdapter's `broadcast` is replaced on each adapter it makes,
// copying the library's message encoding (not exported): local-first.test.ts fails if the copy
// and the library part, or on another version than the one it was checked on (~2.5.8, as
// package.json pins). The gain (deliveries no longer half a second behind their commits at
// 20,000/s) is in bench/RESULTS.md, 2026-11-25.
import type { Namespace } from 'socket.io';
import { Adapter, MessageType, type BroadcastOptions, type ClusterAdapter } from 'socket.io-adapter';

/** The cluster adapter's broadcasts reach this node's sockets at once, not after their NOTIFY.
 *
 * socket.io-adapter's `ClusterAdapter.broadcast` awaits the publishing statement (for the offset
 * of connection-state recovery, which this service does not enable) before it delivers to the
 * node's own sockets: each delivery waited for a round trip to PostgreSQL, and under load for the
 * NOTIFYs queued before it (they are sent one statement after another), which put deliveries
 * about half a second behind the commits at 20,000/s. Here the broadcast is published as the
 * cluster adapter would (the message serialized when it is sent, before anything else touches the
 * packet) and delivered to the node's sockets in the same call. The order of one node's
 * broadcasts is kept on every node: locally they go out as they are called, elsewhere in the order
 * of the NOTIFYs. A failed NOTIFY is reported through the adapter's error handler as before.
 * Broadcasts with acks, and every other cluster operation, are the adapter's own. */
export function localFirst(
  make: (nsp: Namespace) => ClusterAdapter | Adapter,
): (nsp: Namespace) => ClusterAdapter | Adapter {
  // Socket.IO calls it with `new`: a function, not an arrow (what it returns is the adapter).
  return function adapterOf(nsp) {
    const adapter = make(nsp) as ClusterAdapter & {
      publish(message: { type: MessageType; data: unknown }): void;
    };
    if (typeof adapter.publish !== 'function') return adapter;
    adapter.broadcast = (packet: unknown, opts: BroadcastOptions): Promise<void> => {
      if (!opts.flags?.local)
        adapter.publish({
          type: MessageType.BROADCAST,
          // socket.io-adapter's encodeOptions, which it does not export (the copy is held to the
          // library by local-first.test.ts).
          data: {
            packet,
            opts: { rooms: [...opts.rooms], except: [...(opts.except ?? [])], flags: opts.flags },
          },
        });
      Adapter.prototype.broadcast.call(adapter, packet, opts);
      return Promise.resolve();
    };
    return adapter;
  };
}
