// LoCoMo retrieval benchmark: how well the service's memory finds what a long conversation said.
// LoCoMo (snap-research/locomo, `data/locomo10.zip`; never committed here) holds 10 conversations
// whose questions name the turns that answer them. Each conversation is loaded as a client would:
// one user registered per conversation, every turn written through POST /api/assistant/memory as
// "<speaker> (<session date>): <text>", then every question that has evidence (category 5 has none)
// asked through GET /api/assistant/memory?query=&limit=10. Reported, per category and overall:
//   - recall@5 and @10: the share of the questions' evidence turns found among their first 5 / 10
//     results (all evidence turns counted together);
//   - answer@10: of the questions whose answer is four words or fewer, the share whose answer
//     string appears in the first 10 results' text;
//   - and what any ranking could reach there: the share of those short answers written in one of
//     the question's evidence turns, and in any turn of the conversation at all (an answer such as
//     "7 May 2023" for a turn that says "yesterday" is in none);
// beside plain BM25 (k1 1.2, b 0.75, English stop words, no stemming) over the same turns in the
// same run.
// Tune only on the development split (conversations 26, 30, 41, 42, 43: the default); the test
// split (44, 47, 48, 49, 50) measures the product from outside and takes no part in decisions.
// Run: npx tsx bench/locomo.ts <folder of the JSON files> [--conversations 26,30,41,42,43]
//        [--db pglite|postgres] [--env KEY=VALUE,...] [--json out.json] [--questions out.jsonl]
// (--questions writes one line per question: its evidence, answer and both rankings, to study.)
// (--env passes configuration to the service, e.g. OFFLINE_EMBEDDING_MODEL=offline-hash-ngram-v1.)
import { randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { dropSchema } from '../test/schema.js';
import { embeddedDataDir } from './embedded-dir.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    conversations: { type: 'string', default: '26,30,41,42,43' },
    db: { type: 'string', default: 'pglite' },
    env: { type: 'string', default: '' },
    json: { type: 'string' },
    questions: { type: 'string' },
  },
});
const folder = positionals[0];
if (!folder) {
  console.error('usage: npx tsx bench/locomo.ts <folder of locomo JSON files> [--conversations 26,30]');
  process.exit(2);
}

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
}
interface Question {
  question: string;
  answer?: string | number;
  evidence: string[];
  category: number;
}
interface Conversation {
  speaker_a: string;
  speaker_b: string;
  qa: Question[];
  [key: string]: unknown;
}

const CATEGORIES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
};

/** The turns in order, each as the text stored for it. */
function turnsOf(c: Conversation): { id: string; text: string }[] {
  const out: { id: string; text: string }[] = [];
  for (let s = 1; Array.isArray(c[`session_${s}`]); s++) {
    const date = c[`session_${s}_date_time`] as string;
    for (const t of c[`session_${s}`] as Turn[])
      out.push({ id: t.dia_id, text: `${t.speaker} (${date}): ${t.text}` });
  }
  return out;
}

/** Evidence ids as the data spells them ("D1:3", sometimes "D1:3; D1:4" or "D:1:3"). */
function evidenceIds(q: Question): string[] {
  return q.evidence
    .flatMap((e) => e.split(/[;,\s]+/))
    .map((e) => e.trim().replace(/^D:?(\d+):0*(\d+)$/, 'D$1:$2'))
    .filter((e) => /^D\d+:\d+$/.test(e));
}

// ---- BM25, the baseline ----
const STOP = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves'
  ).split(' '),
);
const words = (t: string) => (t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP.has(w));

function bm25(docs: string[]) {
  const tf = docs.map((d) => {
    const m = new Map<string, number>();
    for (const w of words(d)) m.set(w, (m.get(w) ?? 0) + 1);
    return m;
  });
  const len = tf.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
  const avg = len.reduce((a, b) => a + b, 0) / Math.max(1, len.length);
  const df = new Map<string, number>();
  for (const m of tf) for (const w of m.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  const n = docs.length;
  return (query: string, k: number): number[] => {
    const q = [...new Set(words(query))];
    const scores = tf.map((m, i) => {
      let s = 0;
      for (const w of q) {
        const f = m.get(w);
        if (!f) continue;
        const idf = Math.log(1 + (n - df.get(w)! + 0.5) / (df.get(w)! + 0.5));
        s += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * len[i]!) / avg));
      }
      return s;
    });
    return scores
      .map((s, i) => [s, i] as const)
      .filter(([s]) => s > 0)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, k)
      .map(([, i]) => i);
  };
}

// ---- the run ----
interface Tally {
  n: number;
  /** Evidence turns found among the first 5 / 10. */
  r5: number;
  r10: number;
  short: number;
  answer10: number;
  /** Questions with every evidence turn in the first 10; evidence turns asked for. */
  all10: number;
  evidence: number;
}
const tally = (): Tally => ({ n: 0, r5: 0, r10: 0, short: 0, answer10: 0, all10: 0, evidence: 0 });
const results: Record<'service' | 'bm25', Record<string, Tally>> = { service: {}, bm25: {} };
/** Per category: short answers written in one of their evidence turns, and in any turn. */
const reachable: Record<string, { evidence: number; anyTurn: number }> = {};

function count(
  side: 'service' | 'bm25',
  category: string,
  evidence: string[],
  ranked: string[],
  texts: string[],
  answer: string | undefined,
) {
  for (const key of [category, 'all']) {
    const t = (results[side][key] ??= tally());
    t.n++;
    t.r5 += evidence.filter((e) => ranked.slice(0, 5).includes(e)).length;
    const found = evidence.filter((e) => ranked.slice(0, 10).includes(e)).length;
    t.r10 += found;
    t.evidence += evidence.length;
    if (found === evidence.length) t.all10++;
    if (answer !== undefined) {
      t.short++;
      const hay = texts.slice(0, 10).join('\n').toLowerCase();
      if (hay.includes(answer.toLowerCase())) t.answer10++;
    }
  }
}

async function main() {
  const extra = Object.fromEntries(
    values.env
      .split(',')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  let dbEnv: Record<string, string | undefined>;
  let schema: string | undefined;
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  if (values.db === 'postgres') {
    schema = `bench_locomo_${randomBytes(4).toString('hex')}`;
    dbEnv = { DATABASE_URL: url, DB_SCHEMA: schema };
  } else dbEnv = embeddedDataDir();
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    AUTH_RATE_LIMIT: '100000',
    ...dbEnv,
    ...extra,
  });
  const deps = await createDeps(config);
  const { app } = await buildApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const started = performance.now();
  let writeMs = 0;
  let searchMs = 0;
  let searches = 0;
  try {
    for (const name of values.conversations.split(',')) {
      const c = JSON.parse(readFileSync(join(folder!, `${name}.json`), 'utf8')) as Conversation;
      const turns = turnsOf(c);
      const lowered = turns.map((t) => t.text.toLowerCase());
      const reg = await fetch(`${base}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          email: `locomo-${name}-${randomBytes(3).toString('hex')}@example.test`,
          password: 'a long password',
        }),
      });
      const { accessToken } = (await reg.json()) as { accessToken: string };
      const auth = { authorization: `Bearer ${accessToken}` };
      const byMemory = new Map<number, string>();
      const t0 = performance.now();
      // One after another, in the conversation's order, as a client storing it would.
      for (const turn of turns) {
        const res = await fetch(`${base}/api/assistant/memory`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ content: turn.text, source: 'shared' }),
        });
        if (res.status !== 201) throw new Error(`write ${res.status}: ${await res.text()}`);
        byMemory.set(((await res.json()) as { id: number }).id, turn.id);
      }
      writeMs += performance.now() - t0;
      const search = bm25(turns.map((t) => t.text));
      for (const q of c.qa) {
        const evidence = evidenceIds(q);
        if (q.category === 5 || evidence.length === 0) continue;
        const category = CATEGORIES[q.category] ?? String(q.category);
        const answer = q.answer === undefined ? undefined : String(q.answer);
        const short =
          answer !== undefined && answer.trim().split(/\s+/).length <= 4 ? answer.trim() : undefined;
        if (short !== undefined) {
          const needle = short.toLowerCase();
          const ids = new Set(evidence);
          const inEvidence = turns.some((t, i) => ids.has(t.id) && lowered[i]!.includes(needle));
          const inAnyTurn = lowered.some((text) => text.includes(needle));
          for (const key of [category, 'all']) {
            const r = (reachable[key] ??= { evidence: 0, anyTurn: 0 });
            if (inEvidence) r.evidence++;
            if (inAnyTurn) r.anyTurn++;
          }
        }
        const s0 = performance.now();
        const res = await fetch(
          `${base}/api/assistant/memory?${new URLSearchParams({ query: q.question, limit: '10' })}`,
          {
            headers: auth,
          },
        );
        searchMs += performance.now() - s0;
        searches++;
        const { memories } = (await res.json()) as { memories: { id: number; content: string }[] };
        count(
          'service',
          category,
          evidence,
          memories.map((m) => byMemory.get(m.id) ?? '?'),
          memories.map((m) => m.content),
          short,
        );
        const hits = search(q.question, 10);
        if (values.questions)
          appendFileSync(
            values.questions,
            JSON.stringify({
              conversation: name,
              category,
              question: q.question,
              answer: short,
              evidence,
              evidenceText: evidence.map((e) => turns.find((t) => t.id === e)?.text),
              service: memories.map((m) => byMemory.get(m.id) ?? '?'),
              serviceText: memories.map((m) => m.content),
              bm25: hits.map((i) => turns[i]!.id),
              bm25Text: hits.map((i) => turns[i]!.text),
            }) + '\n',
          );
        count(
          'bm25',
          category,
          evidence,
          hits.map((i) => turns[i]!.id),
          hits.map((i) => turns[i]!.text),
          short,
        );
      }
    }
  } finally {
    await app.close();
    await deps.close();
    if (schema) await dropSchema(url, schema);
  }
  const rows = Object.keys(results.service).sort((a, b) =>
    a === 'all' ? 1 : b === 'all' ? -1 : a.localeCompare(b),
  );
  const f = (x: number) => x.toFixed(3);
  console.log(
    `LoCoMo conversations ${values.conversations} on ${values.db}${values.env ? ` (${values.env})` : ''}`,
  );
  console.log(
    `${'category      n    recall@5       recall@10      answer@10 (n)'.padEnd(69)}answer written in`,
  );
  console.log(
    `${'                   service bm25   service bm25   service bm25'.padEnd(69)}evidence any turn`,
  );
  for (const k of rows) {
    const s = results.service[k]!;
    const b = results.bm25[k]!;
    const r = reachable[k] ?? { evidence: 0, anyTurn: 0 };
    const ranked = `${k.padEnd(12)} ${String(s.n).padStart(4)}   ${f(s.r5 / s.evidence)} ${f(b.r5 / b.evidence)}    ${f(s.r10 / s.evidence)} ${f(b.r10 / b.evidence)}    ${f(s.answer10 / Math.max(1, s.short))} ${f(b.answer10 / Math.max(1, b.short))} (${s.short})`;
    const written = `${f(r.evidence / Math.max(1, s.short))}    ${f(r.anyTurn / Math.max(1, s.short))}`;
    console.log(`${ranked.padEnd(69)}${written}`);
  }
  const s = results.service.all!;
  const b = results.bm25.all!;
  console.log(
    `questions with all their evidence in the first 10: service ${f(s.all10 / s.n)}, bm25 ${f(b.all10 / b.n)}`,
  );
  console.log(
    `writes ${(writeMs / 1000).toFixed(1)} s, searches ${searches} at ${(searchMs / Math.max(1, searches)).toFixed(1)} ms each, total ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  if (values.json) writeFileSync(values.json, JSON.stringify({ args: values, results, reachable }, null, 2));
}

await main();
