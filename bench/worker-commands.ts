// Both sides of a bench's load-generator worker (chat.ts, workflows.ts, suggestions.ts,
// training.ts): the worker
// answers each `{ id, ...command }` with `{ id, result }` or `{ id, error }`, and first sends
// `{ id: 0, result: env }` (its fake model server's environment) once it is ready.
import { parentPort, Worker } from 'node:worker_threads';

/** Starts `script` as a worker with this process's arguments; resolves with the environment it
 * sends first and a command sender. */
export async function startCommandWorker<Command extends { cmd: string }>(script: URL) {
  const worker = new Worker(script, { argv: process.argv.slice(2) });
  const waiting = new Map<number, { ok: (v: any) => void; fail: (e: Error) => void }>();
  let next = 1;
  worker.on('message', (m: { id: number; result?: unknown; error?: string }) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error !== undefined) w?.fail(new Error(m.error));
    else w?.ok(m.result);
  });
  worker.on('error', (err) => {
    for (const w of waiting.values()) w.fail(err);
  });
  const ask = <T>(id: number, send?: Command | { cmd: 'close' }) =>
    new Promise<T>((ok, fail) => {
      waiting.set(id, { ok, fail });
      if (send) worker.postMessage({ id, ...send });
    });
  const env = await ask<Record<string, string>>(0);
  return {
    env,
    send: <T>(c: Command) => ask<T>(next++, c),
    async close() {
      await ask(next++, { cmd: 'close' });
      await worker.terminate();
    },
  };
}

/** The worker side: sends `env` first, then answers each `{ id, ...command }` with what `answer`
 * resolves to, or its error. */
export function answerCommands<Command extends { cmd: string }>(
  env: Record<string, string>,
  answer: (command: Command) => Promise<unknown>,
): void {
  const port = parentPort!;
  port.on('message', (m: { id: number } & Command) => {
    answer(m).then(
      (result) => port.postMessage({ id: m.id, result }),
      (err: unknown) => port.postMessage({ id: m.id, error: String(err) }),
    );
  });
  port.postMessage({ id: 0, result: env });
}
