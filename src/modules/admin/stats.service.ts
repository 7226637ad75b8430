// System statistics for operators (spec: admin prefix `stats`; "System Statistics" row of the
// permission matrix): accounts, sign-in sessions per client type, memory, chat, timeline and model
// usage. Each figure comes from the module that owns its table; this file only puts them together.
export interface StatsSources {
  auth: {
    sessionStats(hours: number): Promise<{ clientType: string; sessions: number; signIns: number }[]>;
  };
  users: { countByRoleAndType(): Promise<{ role: string; accountType: string; count: number }[]> };
  memory: { countByTier(): Promise<{ tier: string; count: number }[]> };
  chat: {
    stats(hours: number): Promise<{
      conversations: number;
      messages: { total: number; recent: number; failed: number };
    }>;
  };
  timeline: { stats(hours: number): Promise<{ total: number; recent: number }> };
  models: {
    usage(hours: number): Promise<
      {
        kind: string;
        outcome: string;
        calls: number;
        tokensIn: number;
        tokensOut: number;
        avgLatencyMs: number;
        p95LatencyMs: number;
      }[]
    >;
  };
}

export async function systemStats(sources: StatsSources, hours: number) {
  const [users, clientTypes, memories, chat, timelineEvents, modelCalls] = await Promise.all([
    sources.users.countByRoleAndType(),
    sources.auth.sessionStats(hours),
    sources.memory.countByTier(),
    sources.chat.stats(hours),
    sources.timeline.stats(hours),
    sources.models.usage(hours),
  ]);
  return {
    windowHours: hours,
    users,
    clientTypes,
    memories,
    conversations: chat.conversations,
    messages: chat.messages,
    timelineEvents,
    modelCalls,
  };
}
