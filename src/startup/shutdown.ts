// A node's drain on SIGTERM (a rolling deploy, a scale-down), in order: it answers 503 to every
// new request, /api/health included (a balancer takes the node out), refuses new Socket.IO
// connections and answers a chatError 503 to any new chat turn; its job workers fetch nothing
// more. The requests, turns and jobs already running may finish, for up to SHUTDOWN_GRACE_MS
// together; a job still running then is handed back to the queue, due at once, for another node.
// Then it stops listening, closes every socket's connection, which a Socket.IO client takes as a
// lost transport and reconnects (behind a balancer, to another node), and the app and the
// service close: the audit log's last batch is written, the database released. (The listener
// stays open during the grace: Socket.IO closes its connections when the HTTP server closes.)
import type { BuiltApp } from '../app.js';
import type { Deps } from '../deps.js';
import { closeConnections } from '../platform/realtime/socket-server.js';

export interface DrainReport {
  /** Whether every request and chat turn finished within the grace. */
  settled: boolean;
  /** Jobs handed back to the queue unfinished. */
  releasedJobs: number;
}

/** Drains the node and closes everything; `deps` and `built` are unusable afterwards. */
export async function drainAndClose(
  built: Pick<BuiltApp, 'app' | 'io'>,
  deps: Deps,
  graceMs = deps.config.shutdownGraceMs,
): Promise<DrainReport> {
  const deadline = Date.now() + graceMs;
  const { app, io } = built;
  deps.drain.begin();
  const [settled, { released }] = await Promise.all([deps.drain.idle(graceMs), deps.jobs.stop({ graceMs })]);
  // The turns' last events and acks are written (a turn's ack follows its end by a tick; a
  // connection closes once what it was given is sent); then the sockets go.
  await new Promise((resolve) => setImmediate(resolve));
  closeConnections(io);
  if (app.server.listening) app.server.close();
  deps.log.info(
    {
      settled,
      unfinished: deps.drain.inFlight,
      releasedJobs: released,
      tookMs: graceMs - (deadline - Date.now()),
    },
    'drained',
  );
  await app.close();
  await deps.close();
  return { settled, releasedJobs: released };
}
