// Chat turn overhead (issue 5): connected Socket.IO clients send chatMessage against a local
// OpenAI-compatible model server that answers at once, while each user has many memories.
// After a warm-up turn per client, two phases per database:
//  1. latency at a steady rate (--rate turns/s spread over all clients, for --seconds): the turn
//     time (chatMessage sent → final assistantResponse), the model calls' own time (the gateway's
//     recorded latency of the chat and embedding calls, loopback HTTP included), and the
//     server-side overhead = turn − model time;
//  2. throughput: every client sends --turns messages back to back; turns per second, and the
//     CPU time per turn of the service's main thread and (PGlite) its database thread.
// The load generator (the clients) and the model server run in a worker thread, as they would
// run on other machines: the service's event loop is its own, though all three share the
// machine's cores (and PostgreSQL's). Two overhead figures: the clients' view (turn time minus the
// turn's mean model time, loopback and the client's own decoding included), and the service's
// own per-turn figure (chat_turn_overhead_seconds: chatMessage received → last response sent,
// minus that turn's model calls), the one the targets are about.
// --stream: the clients ask for streamed replies (the default of real clients; the fake model
// server sends each reply in 8-character deltas, 1 ms apart), instead of whole ones.
// The memories' text comes from one of two corpora (--corpus):
//  - varied (default): sentences of 12 words drawn from 5,000 made-up content words with a
//    Zipf-Mandelbrot law (the commonest word is in about 5% of memories, most in well under 1%),
//    like the content words of real conversation once full text search drops the stop words;
//  - narrow: 20 words, each in 60% of the memories, so every query matches about 85% of a user's
//    memories: the worst case for the full-text side, which ranks every match.
// Run: npx tsx bench/chat.ts [--clients 200] [--users 20] [--memories 10000] [--rate 20] [--seconds 10] [--turns 3] [--corpus varied|narrow] [--stream] [--only pglite|postgres]
// Runs on PGlite, and on PostgreSQL too when DATABASE_URL is set. Talks only to 127.0.0.1.
// CHAT_CPU_PROFILE=/tmp/chat.cpuprofile writes the service thread's CPU profile of phase 2 to
// /tmp/chat.cpuprofile.<db> (open it in Chrome's DevTools).
// CHAT_STATEMENT_TIMES=1 prints which statements held the database longest over phase 2 (each
// with its count per turn); CHAT_STATEMENT_TIMES=steady over phase 1, where turns come mostly
// alone, as in a running service, and each makes its by-key reads by itself.
// Its parts, in bench/chat/: corpus.ts (the memories' and questions' text), load.ts (the load
// generator, in a worker thread), probes.ts (statements and threads' CPU), run.ts (one database's
// run) and report.ts (the table).
import { parseArgs } from 'node:util';
import { onEachDatabase } from './databases.js';
import { installProbes } from './chat/probes.js';
import { printReport } from './chat/report.js';
import { run, type Options } from './chat/run.js';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '200' },
    users: { type: 'string', default: '20' },
    memories: { type: 'string', default: '10000' },
    turns: { type: 'string', default: '3' },
    rate: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '10' },
    corpus: { type: 'string', default: 'varied' },
    stream: { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
const options: Options = {
  clients: Number(values.clients),
  users: Number(values.users),
  memories: Number(values.memories),
  turns: Number(values.turns),
  rate: Number(values.rate),
  seconds: Number(values.seconds),
  corpus: values.corpus === 'narrow' ? 'narrow' : 'varied',
  stream: values.stream,
};

installProbes();
const results = await onEachDatabase('bench_chat', values.only, (db, env) => run(options, db, env));
printReport(options, results);
process.exit(0);
