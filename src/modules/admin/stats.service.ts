// System statistics for operators (spec: admin prefix `stats`; "System Statistics" row of the
// permission matrix): accounts, memory, chat, timeline and model usage. Read-only counts over the
// modules' tables.
import { sql } from 'kysely';
import type { Db } from '../../platform/db/database.js';

export interface StatsWindow {
  hours: number;
}

export async function systemStats(db: Db, { hours }: StatsWindow) {
  const since = sql<Date>`now() - make_interval(hours => ${hours})`;
  const [users, memories, conversations, messages, timeline, models] = await Promise.all([
    db
      .selectFrom('users')
      .select(['role', 'account_type', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy(['role', 'account_type'])
      .execute(),
    db
      .selectFrom('memories')
      .select(['tier', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('tier')
      .execute(),
    db
      .selectFrom('conversations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('chat_messages')
      .select([
        (eb) => eb.fn.countAll<number>().as('total'),
        sql<number>`count(*) filter (where created_at > ${since})`.as('recent'),
        sql<number>`count(*) filter (where status = 'failed')`.as('failed'),
      ])
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('timeline_events')
      .select([
        (eb) => eb.fn.countAll<number>().as('total'),
        sql<number>`count(*) filter (where occurred_at > ${since})`.as('recent'),
      ])
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('model_calls')
      .where('created_at', '>', since)
      .select([
        'kind',
        'outcome',
        (eb) => eb.fn.countAll<number>().as('calls'),
        sql<number>`coalesce(sum(tokens_in), 0)`.as('tokensIn'),
        sql<number>`coalesce(sum(tokens_out), 0)`.as('tokensOut'),
        sql<number>`coalesce(round(avg(latency_ms)), 0)`.as('avgLatencyMs'),
        sql<number>`coalesce(percentile_disc(0.95) within group (order by latency_ms), 0)`.as('p95LatencyMs'),
      ])
      .groupBy(['kind', 'outcome'])
      .orderBy('kind')
      .execute(),
  ]);
  const n = (v: unknown) => Number(v);
  return {
    windowHours: hours,
    users: users.map((u) => ({ role: u.role, accountType: u.account_type, count: n(u.n) })),
    memories: memories.map((m) => ({ tier: m.tier, count: n(m.n) })),
    conversations: n(conversations.n),
    messages: { total: n(messages.total), recent: n(messages.recent), failed: n(messages.failed) },
    timelineEvents: { total: n(timeline.total), recent: n(timeline.recent) },
    modelCalls: models.map((m) => ({
      kind: m.kind,
      outcome: m.outcome,
      calls: n(m.calls),
      tokensIn: n(m.tokensIn),
      tokensOut: n(m.tokensOut),
      avgLatencyMs: n(m.avgLatencyMs),
      p95LatencyMs: n(m.p95LatencyMs),
    })),
  };
}
