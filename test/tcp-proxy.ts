// A TCP proxy in front of a real server (PostgreSQL, Redis) that a test can cut and restore: while
// cut, every connection through it is closed and new ones are closed as they arrive, as when the
// server goes away (a crash, a network partition); restored, it passes connections again.
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** The server goes away: open connections end, new ones are refused. */
  cut(): void;
  /** The server is back. */
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let down = false;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    if (down) return client.destroy();
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        open.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      down = true;
      for (const s of open) s.destroy();
    },
    restore() {
      down = false;
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise((ok) => server.close(ok));
    },
  };
}
