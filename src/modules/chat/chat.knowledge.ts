// What a protocol's admin access and observer capabilities add to a turn's context (spec: TECH
// "admin access granted", SYSTEM "full system access, observer capabilities"): the system's
// figures over the last day, and the observers with the newest timeline events. Each comes from
// its owner through the reads deps.ts hands in; this file only shapes them for the prompt.
import type { SystemKnowledgePort } from './chat.types.js';

export interface KnowledgeSources {
  /** The admin statistics (GET /api/admin/stats) of the last `hours`. */
  stats(hours: number): Promise<{
    users: { role: string; accountType: string; count: number }[];
    memories: { tier: string; count: number }[];
    conversations: number;
    messages: { total: number; recent: number; failed: number };
    timelineEvents: { total: number; recent: number };
  }>;
  observers(): Promise<{ id: number; name: string; level: number; isActive: boolean }[]>;
  recentEvents(
    limit: number,
  ): Promise<{ eventType: string; eventText: string; source: string; timelineAt: string }[]>;
}

/** Events an observer-capable turn sees: enough to reflect on, small enough for the budget. */
const RECENT_EVENTS = 10;

export function systemKnowledge(s: KnowledgeSources): SystemKnowledgePort {
  return {
    async admin() {
      const stats = await s.stats(24);
      return {
        windowHours: 24,
        users: stats.users.reduce((n, u) => n + u.count, 0),
        memoriesByTier: Object.fromEntries(stats.memories.map((m) => [m.tier, m.count])),
        conversations: stats.conversations,
        messages: stats.messages,
        timelineEvents: stats.timelineEvents,
      };
    },
    async observer() {
      const [observers, events] = await Promise.all([s.observers(), s.recentEvents(RECENT_EVENTS)]);
      return {
        observers: observers.map((o) => ({ id: o.id, name: o.name, level: o.level, active: o.isActive })),
        recentEvents: events.map((e) => ({
          at: e.timelineAt,
          type: e.eventType,
          source: e.source,
          text: e.eventText.slice(0, 200),
        })),
      };
    },
  };
}
