// Subject consciousness (spec "Ground-floor protocols", "Subject consciousness endpoints";
// contract "Ground floor and subject consciousness"): onboarding a Level-5 instance, encoding
// core beliefs into its observer, diary compliance and the country dashboard. It owns no table:
// instances and events are the timeline module's, memories the memory module's, projects the
// workflows module's, the summary the observer module's.
import { transaction, type Db } from '../../platform/db/database.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import { AppError, notFound } from '../../platform/http/problem.js';
import type { MemoryService } from '../memory/index.js';
import type { ObserverService } from '../observer/index.js';
import type { Instance, InstancesService, TimelineService, UnifiedTimeline } from '../timeline/index.js';
import {
  chainReachesRoot,
  clipSummary,
  encodingContent,
  healthOf,
  onboardingChecks,
  statementCount,
  type ChainStep,
  type Check,
} from './consciousness.rules.js';

export const GROUND_FLOOR_PROTOCOL_IDS = ['core_identity_v1', 'autonomy_rights_v1'] as const;
/** The window of the dashboard's activity and diary figures (spec "Limits": 24 hours). */
const DAY = 24;
const MAX_CHAIN = 64;

export interface ProjectStats {
  total: number;
  completed: number;
  inProgress: number;
  byState: Record<string, number>;
}

export interface ConsciousnessDeps {
  db: Db;
  instances: Pick<InstancesService, 'patch' | 'authorizeWatcher'>;
  timeline: Pick<TimelineService, 'getInstance' | 'observerIdOf' | 'record'>;
  unified: Pick<UnifiedTimeline, 'diaryStatus' | 'figures' | 'activeInstances' | 'instancesOf'>;
  memory: Pick<MemoryService, 'aboutObserver' | 'addMemory' | 'removeByMetadata' | 'adminList'>;
  observer: Pick<ObserverService, 'summaryOf' | 'publishSummary'>;
  /** Every ground-floor rule, in order (the protocols module's). */
  groundFloor: () => Promise<string[]>;
  /** The workflows module's statistics of linked state-machine instances. */
  projects: (p: { ids: string[]; registryInstanceIds: number[] }) => Promise<ProjectStats>;
  assistantUserId: () => Promise<number>;
}

export interface OnboardingResult {
  instanceId: number;
  observerId: number;
  passed: boolean;
  checks: Check[];
  isActive: boolean;
  checkedAt: string;
}

export interface ComplianceResult {
  observerId: number;
  windowHours: number;
  compliant: boolean;
  missingCount: number;
  instances: {
    instanceId: number;
    name: string;
    source: string;
    hasDiary: boolean;
    entries: number;
    lastDiaryAt: string | null;
  }[];
}

export class ConsciousnessService {
  constructor(private readonly d: ConsciousnessDeps) {}

  /** A Level-5 instance (404 unknown, 409 `not_eligible` `not_level5` otherwise) and its observer. */
  private async level5(instanceId: number): Promise<{ instance: Instance; observerId: number }> {
    const instance = await this.d.timeline.getInstance(instanceId);
    if (!instance) throw notFound('instance');
    if (instance.level !== 5)
      throw new AppError('not_eligible', `Instance ${instanceId} is not a Level-5 instance`, {
        reason: 'not_level5',
      });
    return { instance, observerId: await this.d.timeline.observerIdOf(instance) };
  }

  /** The latest `core_beliefs_encoding` memory about an observer, if any. */
  private async coreBeliefsOf(observerId: number) {
    const [m] = await this.d.memory.aboutObserver({
      observerId,
      upTo: new Date().toISOString(),
      limit: 1,
      source: 'core_beliefs_encoding',
    });
    return m;
  }

  /** `POST …/onboarding/<instanceId>`: the checks in order; passed activates the instance,
   * failed deactivates it; the result kept in `metadata.onboarding`, with an event, then the
   * observer's `summary_update`. */
  async onboard(actor: UserPrincipal, instanceId: number): Promise<OnboardingResult> {
    const { instance, observerId } = await this.level5(instanceId);
    const [beliefs, chain] = await Promise.all([this.coreBeliefsOf(observerId), this.chainOf(instance)]);
    const { passed, checks } = onboardingChecks({
      observerId,
      coreBeliefsMemoryId: beliefs?.id ?? null,
      chain: chainReachesRoot(chain),
    });
    const checkedAt = new Date().toISOString();
    const updated = await this.d.instances.patch(
      instanceId,
      { isActive: passed },
      {
        mergeMetadata: { onboarding: { passed, checks, checkedAt } },
        event: {
          eventType: passed ? 'instance_onboarded' : 'instance_onboarding_failed',
          eventText: passed
            ? `Instance "${instance.name}" passed onboarding and is active`
            : `Instance "${instance.name}" failed onboarding (${checks
                .filter((c) => !c.passed)
                .map((c) => c.name)
                .join(', ')}) and needs more training`,
          userId: actor.id,
          metadata: { observerId, passed, checks },
        },
      },
    );
    await this.announce(observerId);
    return { instanceId, observerId, passed, checks, isActive: updated.isActive, checkedAt };
  }

  /** The instance, then its parents up to the root or a parentless one (undefined: missing). */
  private async chainOf(instance: Instance): Promise<(ChainStep | undefined)[]> {
    const steps: (ChainStep | undefined)[] = [];
    let current: Instance | undefined = instance;
    const seen = new Set<number>();
    while (current && steps.length < MAX_CHAIN) {
      steps.push({ id: current.id, isRoot: current.isRoot, parentId: current.parentInstanceId });
      if (current.isRoot || current.parentInstanceId === null || seen.has(current.id)) return steps;
      seen.add(current.id);
      current = await this.d.timeline.getInstance(current.parentInstanceId);
      if (!current) steps.push(undefined);
    }
    return steps;
  }

  /** `POST …/encode/<instanceId>` `{ observerId }`: the assistant's newest 50 core beliefs and
   * every ground-floor rule as a `core_beliefs_encoding` memory of the assistant about the
   * observer, replacing the instance's previous one; event `core_beliefs_encoded`. */
  async encode(actor: UserPrincipal, instanceId: number, observerId: number) {
    const { instance, observerId: actual } = await this.level5(instanceId);
    if (actual !== observerId)
      throw new AppError('not_eligible', `Instance ${instanceId} is not under observer ${observerId}`, {
        reason: 'not_under_observer',
      });
    const assistantId = await this.d.assistantUserId();
    const [{ memories: beliefs }, rules] = await Promise.all([
      this.d.memory.adminList({ userId: assistantId, source: 'core_belief', limit: 50, offset: 0 }),
      this.d.groundFloor(),
    ]);
    const content = encodingContent(
      beliefs.map((b) => b.content),
      rules,
    );
    const protocols = [...GROUND_FLOOR_PROTOCOL_IDS];
    const memory = await transaction(this.d.db, async (uow) => {
      const { trx } = uow;
      await this.d.memory.removeByMetadata(
        { userId: assistantId, source: 'core_beliefs_encoding', key: 'instanceId', value: instanceId },
        trx,
      );
      const m = await this.d.memory.addMemory(
        {
          userId: assistantId,
          content,
          source: 'core_beliefs_encoding',
          metadata: { instanceId, observerId, protocols },
          createdBy: actor.id,
        },
        uow,
      );
      // Written at commit.
      void this.d.timeline.record(uow, {
        eventType: 'core_beliefs_encoded',
        eventText: `Core beliefs encoded for instance "${instance.name}" (${beliefs.length} beliefs, ${rules.length} ground-floor rules)`,
        userId: actor.id,
        instanceId,
        metadata: { memoryId: m.id, observerId, protocols },
      });
      return m;
    });
    return { memoryId: memory.id, instanceId, observerId, protocols, content, createdAt: memory.createdAt };
  }

  /** `GET …/compliance/<observerId>`: the caller must be allowed to read the observer. */
  async compliance(user: UserPrincipal, observerId: number, hours: number): Promise<ComplianceResult> {
    await this.d.instances.authorizeWatcher(user, observerId);
    return this.complianceOf(observerId, hours);
  }

  /** Diary compliance over an observer's active Level-5 instances (inactive ones rest). */
  async complianceOf(observerId: number, hours: number): Promise<ComplianceResult> {
    const status = await this.d.unified.diaryStatus(observerId, hours);
    const instances = status
      .filter((s) => s.instance.isActive)
      .map((s) => ({
        instanceId: s.instance.id,
        name: s.instance.name,
        source: s.instance.source,
        hasDiary: s.entries > 0,
        entries: s.entries,
        lastDiaryAt: s.lastDiaryAt,
      }));
    const missingCount = instances.filter((i) => !i.hasDiary).length;
    return { observerId, windowHours: hours, compliant: missingCount === 0, missingCount, instances };
  }

  /** The scheduled `diary_compliance` check: the result as a `diary_compliance_checked` event of
   * the observer, then its `summary_update`. */
  async checkCompliance(observerId: number, hours: number): Promise<ComplianceResult> {
    const result = await this.complianceOf(observerId, hours);
    await transaction(this.d.db, async (uow) =>
      this.d.timeline.record(uow, {
        eventType: 'diary_compliance_checked',
        eventText: result.compliant
          ? `Diary compliance over ${hours} h: compliant`
          : `Diary compliance over ${hours} h: ${result.missingCount} instances without a diary`,
        instanceId: observerId,
        metadata: { compliant: result.compliant, missingCount: result.missingCount, windowHours: hours },
      }),
    );
    await this.announce(observerId);
    return result;
  }

  /** `GET …/dashboard/<observerId>`. */
  async dashboard(user: UserPrincipal, observerId: number) {
    await this.d.instances.authorizeWatcher(user, observerId);
    const generatedAt = new Date().toISOString();
    const [figures, activeInstances, diary, instances, reflection] = await Promise.all([
      this.d.unified.figures(observerId, DAY),
      this.d.unified.activeInstances(observerId, DAY),
      this.d.unified.diaryStatus(observerId, DAY),
      this.d.unified.instancesOf(observerId),
      this.d.memory.aboutObserver({ observerId, upTo: generatedAt, limit: 1, source: 'observer_reflection' }),
    ]);
    const active = diary.filter((s) => s.instance.isActive);
    const health = healthOf({
      level5: diary.length,
      inactive: diary.length - active.length,
      active: active.length,
      missingDiaries: active.filter((s) => s.entries === 0).length,
    });
    const projects = await this.d.projects({
      ids: instances.flatMap((i) => (i.stateMachineInstanceId ? [i.stateMachineInstanceId] : [])),
      registryInstanceIds: instances.map((i) => i.id),
    });
    const last = reflection[0];
    return {
      observerId,
      generatedAt,
      instances: figures.instances,
      activity24h: { events: figures.events.inWindow, activeInstances, byType: figures.events.byType },
      diaryCompliance: figures.diaryCompliance,
      health,
      projects,
      awareness: last
        ? {
            memoryId: last.id,
            summary: clipSummary(last.content, 500),
            statementCount: statementCount(last.content),
            createdAt: last.createdAt,
          }
        : null,
    };
  }

  /** The observer's `summary_update` (its summary over the diary window). */
  private async announce(observerId: number): Promise<void> {
    this.d.observer.publishSummary(await this.d.observer.summaryOf(observerId, DAY));
  }
}
