// Clients that never authenticate, in a process of their own (their 25 MB strings would weigh on
// the server's RSS in its process): `clients` Socket.IO clients at once over `transport`, each
// connecting with an `auth.token` of `bytes` bytes, which the server refuses. Prints
// { outcomes: { outcome: count } } as JSON on stdout: "connect_error <code>" when the server read
// the token and refused it, "disconnect <reason>" when it closed the connection first.
// Used by bench/socket-preauth.ts.
// Run: node bench/socket-preauth-client.mjs '{ "url", "clients", "bytes", "transport" }'
import { io } from 'socket.io-client';

const o = JSON.parse(process.argv[2]);
const token = 'x'.repeat(o.bytes);

function one() {
  return new Promise((resolve) => {
    const socket = io(o.url, {
      auth: { token },
      transports: [o.transport],
      reconnection: false,
      forceNew: true,
    });
    socket.once('connect', () => {
      socket.close();
      resolve('connected');
    });
    socket.once('connect_error', (err) => {
      socket.close();
      resolve(`connect_error ${err.data?.code ?? err.message}`);
    });
    socket.once('disconnect', (reason) => {
      socket.close();
      resolve(`disconnect ${reason}`);
    });
  });
}

const outcomes = {};
for (const outcome of await Promise.all(Array.from({ length: o.clients }, one)))
  outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
process.stdout.write(JSON.stringify({ outcomes }));
