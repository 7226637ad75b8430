// The reranker's own CPU per search (memory.rerank.ts), on pools shaped like a chat turn's: 24
// candidates and the turns written just before and after each (up to 72 texts), drawn from
// LoCoMo conversations' turns, the question as the query. No database: this times the second
// stage's computation alone. Each round reranks every pool (the first one warms the process up:
// compare the last). Prints µs per rerank (median and p90) per round and a checksum of the
// rankings, to compare two codes' results. `--corpus chat` draws the pools from the chat bench's
// made-up words instead (bench/chat/corpus.ts: 20,000 memories of words outside the word vectors,
// so no word cosine is computed).
// Run: npx tsx bench/rerank.ts <folder of LoCoMo JSON files> [--conversations 26,30] [--rounds 3]
//      npx tsx bench/rerank.ts --corpus chat [--rounds 3]
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadWordSimilarity } from '../src/platform/models/words.js';
import { Reranker, type RerankCandidate } from '../src/modules/memory/memory.rerank.js';
import { corpusOf } from './chat/corpus.js';
import { pct } from './percentile.js';
import { prng } from './prng.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    conversations: { type: 'string', default: '26,30,41,42,43' },
    rounds: { type: 'string', default: '3' },
    pool: { type: 'string', default: '24' },
    corpus: { type: 'string', default: 'locomo' },
  },
});
const folder = positionals[0];
if (!folder && values.corpus !== 'chat')
  throw new Error('usage: npx tsx bench/rerank.ts <folder of LoCoMo JSON files> | --corpus chat');

interface Conversation {
  qa: { question: string }[];
  [key: string]: unknown;
}

const pools: {
  query: string;
  candidates: RerankCandidate[];
  neighbours: Map<number, { content: string; previous?: number; next?: number }>;
}[] = [];
const size = Number(values.pool);
const next = prng(38);
/** A pool of `size` of the turns (ids from `base`), each with the turns before and after it. */
function poolOf(query: string, turns: string[], base: number) {
  const picked = new Set<number>();
  while (picked.size < Math.min(size, turns.length - 2))
    picked.add(1 + Math.floor(next() * (turns.length - 2)));
  const id = (i: number) => base + i;
  const candidates = [...picked].map((i, k) => ({
    memoryId: id(i),
    content: turns[i]!,
    cosine: k % 2 === 0 ? 0.2 + 0.5 * next() : undefined,
    fused: 1 - k / size,
    previous: id(i - 1),
    next: id(i + 1),
  }));
  const neighbours = new Map<number, { content: string; previous?: number; next?: number }>();
  for (const i of picked)
    for (const j of [i - 1, i + 1])
      if (!picked.has(j)) neighbours.set(id(j), { content: turns[j]!, previous: id(j - 1), next: id(j + 1) });
  return { query, candidates, neighbours };
}

if (values.corpus === 'chat') {
  const corpus = corpusOf('varied');
  const turns = Array.from({ length: 20_000 }, (_, i) => corpus.sentence(i));
  for (let n = 0; n < 1_000; n++) pools.push(poolOf(corpus.question(n), turns, 0));
} else {
  let base = 0;
  for (const name of values.conversations.split(',')) {
    const c = JSON.parse(readFileSync(join(folder!, `${name}.json`), 'utf8')) as Conversation;
    const turns: string[] = [];
    for (let s = 1; Array.isArray(c[`session_${s}`]); s++)
      for (const t of c[`session_${s}`] as { speaker: string; text: string }[])
        turns.push(`${t.speaker} (${c[`session_${s}_date_time`] as string}): ${t.text}`);
    for (const { question } of c.qa) pools.push(poolOf(question, turns, base));
    base += turns.length;
  }
}

const reranker = new Reranker(await loadWordSimilarity());
for (let round = 1; round <= Number(values.rounds); round++) {
  const times: number[] = [];
  const hash = createHash('sha256');
  for (const p of pools) {
    const t0 = performance.now();
    const ranked = reranker.rerank(p.query, p.candidates, p.neighbours);
    times.push(performance.now() - t0);
    hash.update(ranked.map((r) => `${r.memoryId}:${r.similarity.toFixed(9)}`).join(',') + '\n');
  }
  console.log(
    `round ${round}: ${pools.length} reranks, µs per rerank p50 ${(pct(times, 50) * 1000).toFixed(0)} p90 ${(pct(times, 90) * 1000).toFixed(0)}, rankings ${hash.digest('hex').slice(0, 12)}`,
  );
}
