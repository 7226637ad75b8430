// The chat bench's load generator, run in a worker thread (bench/chat.ts starts it): the
// OpenAI-compatible model server, answering at once, and the Socket.IO clients, which connect,
// warm up, send turns at a steady rate or back to back on command, and time each turn.
import { isMainThread } from 'node:worker_threads';
import { io as connect, type Socket } from 'socket.io-client';
import { startFakeModelServer } from '../../test/fake-model-server.js';
import { answerCommands } from '../worker-commands.js';
import { corpusOf, type CorpusName } from './corpus.js';

/** The worker's commands (main → worker) and answers. */
export type Command =
  | { cmd: 'connect'; url: string; tokens: string[]; corpus: CorpusName; stream: boolean }
  | { cmd: 'warmup' }
  | { cmd: 'steady'; rate: number; seconds: number }
  | { cmd: 'burst'; turns: number }
  | { cmd: 'close' };

/** The worker: the model server, then the clients on command. */
async function loadGenerator() {
  const fake = await startFakeModelServer();
  let sockets: Socket[] = [];
  // The turns' questions, in the corpus the memories were written in (set on `connect`).
  let question = (_n: number): string => {
    throw new Error('connect sets the corpus first');
  };
  // Whether the replies are streamed (the clients' default; the fake sends a reply in 8-character
  // deltas) or come whole (set on `connect`).
  let stream = false;
  // One turn on a socket: resolves with its duration once the (last) response arrived.
  const turn = (s: Socket, n: number) =>
    new Promise<{ ms: number; ok: boolean }>((resolve) => {
      const t0 = performance.now();
      const done = (ok: boolean) => () => {
        s.off('assistantResponse', onResponse);
        s.off('chatError', onError);
        resolve({ ms: performance.now() - t0, ok });
      };
      const onResponse = done(true);
      const onError = done(false);
      s.on('assistantResponse', onResponse);
      s.on('chatError', onError);
      s.emit('chatMessage', {
        message: question(n),
        preferences: { stream },
      });
    });
  const handlers = {
    async connect(c: { url: string; tokens: string[]; corpus: CorpusName; stream: boolean }) {
      const { url, tokens, corpus } = c;
      question = corpusOf(corpus).question;
      stream = c.stream;
      for (const token of tokens) {
        const s = connect(url, {
          auth: { token },
          transports: ['websocket'],
          reconnection: false,
          forceNew: true,
        });
        await new Promise<void>((resolve, reject) => {
          s.on('connect', () => resolve());
          s.on('connect_error', reject);
        });
        sockets.push(s);
      }
      return null;
    },
    async warmup() {
      await Promise.all(sockets.map((s, c) => turn(s, 1_000_000 + c)));
      return null;
    },
    // A steady rate, each turn on the next idle client.
    async steady({ rate, seconds }: { rate: number; seconds: number }) {
      const measured: { n: number; ms: number }[] = [];
      let failures = 0;
      const busy = new Set<number>();
      const inflight: Promise<void>[] = [];
      const total = Math.round(rate * seconds);
      const start = performance.now();
      for (let n = 0; n < total; n++) {
        const due = start + (n * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        let c = n % sockets.length;
        for (let k = 0; k < sockets.length && busy.has(c); k++) c = (c + 1) % sockets.length;
        busy.add(c);
        inflight.push(
          turn(sockets[c]!, n).then((r) => {
            busy.delete(c);
            if (r.ok) measured.push({ n, ms: r.ms });
            else failures++;
          }),
        );
      }
      await Promise.all(inflight);
      return { measured, failures };
    },
    // Every client back to back.
    async burst({ turns }: { turns: number }) {
      const t0 = performance.now();
      let done = 0;
      await Promise.all(
        sockets.map(async (s, c) => {
          for (let i = 0; i < turns; i++) if ((await turn(s, c + i)).ok) done++;
        }),
      );
      return { done, seconds: (performance.now() - t0) / 1000 };
    },
    async close() {
      for (const s of sockets) s.close();
      sockets = [];
      await fake.close();
      return null;
    },
  };
  answerCommands<Command>(fake.env(), (m) => {
    const { cmd, ...args } = m;
    return (handlers[cmd] as (a: typeof args) => Promise<unknown>)(args);
  });
}

if (!isMainThread) await loadGenerator();
