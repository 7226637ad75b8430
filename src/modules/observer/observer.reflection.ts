// Reflections and the observer's cycle (contract: "Observer"). A reflection is one chat call
// (purpose `observer.reflection`) over the observer's newest events of a window, oldest first,
// made outside any transaction; then, in one transaction, an `observer_reflection` memory of the
// assistant, a `reflection_generated` timeline event and the meta-state's latest reflection, and
// after commit the `reflection_generated` socket event. A model failure stores nothing. Offline,
// no model runs: the reflection is a deterministic digest of the events (observer.rules.ts).
// The cycle runs gather, reflect, store and meta_state, reporting each step's outcome: a failed
// reflection fails its step and the cycle's outcome, never the request; the meta-state is always
// updated and the summary is sent as `summary_update`.
import type { Logger } from 'pino';
import { transaction, type Db } from '../../platform/db/database.js';
import type { EventBus } from '../../platform/events/bus.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import { AppError, toProblem } from '../../platform/http/problem.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import type { MemoryService } from '../memory/index.js';
import {
  REFLECTION_EVENT,
  type Instance,
  type TimelineEvent,
  type TimelineService,
  type UnifiedTimeline,
} from '../timeline/index.js';
import * as repo from './observer.repository.js';
import {
  clip,
  offlineDigest,
  REFLECTION_MAX_CHARS,
  REFLECTION_SYSTEM,
  reflectionPrompt,
} from './observer.rules.js';
import type { CycleResult, CycleStep, Reflection, ReflectionInput } from './observer.schemas.js';
import { toMetaState, type ObserverService } from './observer.service.js';

declare module '../../platform/events/bus.js' {
  interface AppEvents {
    /** A committed reflection; sent as `reflection_generated` to its observer's room. */
    'observer.reflection': { observerId: number; reflection: Reflection };
  }
}

export interface ReflectionsDeps {
  db: Db;
  bus: EventBus;
  log: Logger;
  observer: ObserverService;
  timeline: Pick<TimelineService, 'record'>;
  unified: UnifiedTimeline;
  memory: Pick<MemoryService, 'addMemory'>;
  models: Pick<ModelGateway, 'chat' | 'offline'>;
  /** The assistant's own user: it owns reflections. */
  assistantUserId: () => Promise<number>;
}

interface Composed {
  text: string;
  offline: boolean;
}

export class ObserverReflections {
  constructor(private readonly d: ReflectionsDeps) {}

  /** `POST …/reflection`: the reflection, or null (and no call) when the window has no events. */
  async reflect(
    user: UserPrincipal,
    observerId: number,
    input: ReflectionInput,
  ): Promise<{ reflection: Reflection | null; eventCount: number }> {
    const observer = await this.d.observer.access(user, observerId);
    const events = await this.gather(observerId, input);
    if (events.length === 0) return { reflection: null, eventCount: 0 };
    const composed = await this.compose(observer, events);
    return { reflection: await this.store(user, observerId, events, composed), eventCount: events.length };
  }

  /** `POST …/cycle`. */
  async cycle(user: UserPrincipal, observerId: number, input: ReflectionInput): Promise<CycleResult> {
    const observer = await this.d.observer.access(user, observerId);
    const steps: CycleStep[] = [];
    let reflection: Reflection | null = null;

    const events = await this.gather(observerId, input);
    steps.push({
      name: 'gather',
      outcome: 'ok',
      detail: `${events.length} events of the last ${input.hours} h (at most ${input.limit})`,
    });
    if (events.length === 0) {
      steps.push({ name: 'reflect', outcome: 'skipped', detail: 'no events to reflect on' });
      steps.push({ name: 'store', outcome: 'skipped', detail: 'no reflection to store' });
    } else {
      const composed = await this.step(
        steps,
        'reflect',
        () => this.compose(observer, events),
        (c) =>
          c.offline
            ? `offline digest of ${events.length} events`
            : `one model call over ${events.length} events`,
      );
      if (!composed) steps.push({ name: 'store', outcome: 'skipped', detail: 'no reflection to store' });
      else
        reflection =
          (await this.step(
            steps,
            'store',
            () => this.store(user, observerId, events, composed),
            (r) => `memory ${r.memoryId} and a ${REFLECTION_EVENT} event`,
          )) ?? null;
    }

    const outcome = steps.some((s) => s.outcome === 'failed') ? 'failed' : 'completed';
    const awareness = await this.d.unified.awareness(observerId, input.hours);
    const row = await repo.noteCycle(this.d.db, observerId, outcome, awareness);
    const metaState = toMetaState(row, awareness);
    steps.push({ name: 'meta_state', outcome: 'ok', detail: `cycle ${row.cycles}, ${outcome}` });

    this.d.observer.publishSummary(await this.d.observer.summaryOf(observerId, input.hours, metaState));
    return { observerId, outcome, steps, reflection, metaState };
  }

  /** Runs one step of the cycle: its failure is the step's outcome (its problem's detail), not
   * the request's. */
  private async step<T>(
    steps: CycleStep[],
    name: CycleStep['name'],
    run: () => Promise<T>,
    detail: (result: T) => string,
  ): Promise<T | undefined> {
    try {
      const result = await run();
      steps.push({ name, outcome: 'ok', detail: detail(result) });
      return result;
    } catch (err) {
      const problem = toProblem(err);
      if (problem.code === 'internal') this.d.log.error({ err, step: name }, 'observer cycle step failed');
      steps.push({ name, outcome: 'failed', detail: `${problem.code}: ${problem.detail}` });
      return undefined;
    }
  }

  /** Its newest `limit` events of the last `hours`, reflections left out, oldest first. */
  private gather(observerId: number, input: ReflectionInput): Promise<TimelineEvent[]> {
    return this.d.unified.recent(observerId, {
      hours: input.hours,
      limit: input.limit,
      excludeType: REFLECTION_EVENT,
    });
  }

  /** The reflection's text: one chat call, or offline the digest. A failed call is 503
   * `model_unavailable` (the gateway's), an empty answer too. */
  private async compose(observer: Instance, events: TimelineEvent[]): Promise<Composed> {
    if (this.d.models.offline) return { text: offlineDigest(events), offline: true };
    const result = await this.d.models.chat({
      purpose: 'observer.reflection',
      system: REFLECTION_SYSTEM,
      messages: [{ role: 'user', content: reflectionPrompt(observer.name, events) }],
      maxOutputTokens: 1000,
    });
    const text = clip(result.text, REFLECTION_MAX_CHARS);
    if (!text) throw new AppError('model_unavailable', 'The model answered with an empty reflection');
    return { text, offline: result.offline };
  }

  /** The memory, the timeline event and the meta-state's note, in one transaction. */
  private async store(
    user: UserPrincipal,
    observerId: number,
    events: TimelineEvent[],
    composed: Composed,
  ): Promise<Reflection> {
    const assistantId = await this.d.assistantUserId();
    const fromTimelineAt = events[0]!.timelineAt;
    const toTimelineAt = events.at(-1)!.timelineAt;
    return transaction(this.d.db, async (uow) => {
      const { trx } = uow;
      const memory = await this.d.memory.addMemory(
        {
          userId: assistantId,
          content: composed.text,
          source: 'observer_reflection',
          metadata: { observerId, eventCount: events.length, fromTimelineAt, toTimelineAt },
          createdBy: user.id,
        },
        uow,
      );
      // Written at commit.
      void this.d.timeline.record(uow, {
        eventType: REFLECTION_EVENT,
        eventText: `Reflection on ${events.length} events from ${fromTimelineAt} to ${toTimelineAt}`,
        userId: user.id,
        instanceId: observerId,
        metadata: { memoryId: memory.id, eventCount: events.length, offline: composed.offline },
      });
      await repo.noteReflection(trx, observerId, memory.id, new Date(memory.createdAt));
      const reflection: Reflection = {
        memoryId: memory.id,
        observerId,
        text: composed.text,
        eventCount: events.length,
        fromTimelineAt,
        toTimelineAt,
        offline: composed.offline,
        createdAt: memory.createdAt,
      };
      uow.afterCommit(() => this.d.bus.publish('observer.reflection', { observerId, reflection }));
      return reflection;
    });
  }
}
