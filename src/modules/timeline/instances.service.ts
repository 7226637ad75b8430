// The instance registry (spec: "Instance registry"; contract: "Instances, timeline and
// sync") and who may watch an observer's real-time channel.
import { type Db, transaction } from '../../platform/db/database.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import { isForeignKeyViolation } from '../../platform/db/errors.js';
import type { CreateInstanceInput, PatchInstanceInput } from './instances.schemas.js';
import * as repo from './timeline.repository.js';
import { ACTIVITY_CHANGED_EVENT } from './timeline.rules.js';
import type { Instance } from './timeline.schemas.js';
import { toInstance, type RecordInput, type TimelineService } from './timeline.service.js';

/** The instance registry: the timeline module owns the `instances` table. */
export class InstancesService {
  constructor(
    private readonly db: Db,
    private readonly timeline: TimelineService,
  ) {}

  /** Registers an instance; creating it is a timeline event (spec: "Operations that create
   * timeline events: instance creation"). */
  async create(input: CreateInstanceInput, actorId: number): Promise<Instance> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      if (input.parentInstanceId !== undefined) {
        const parent = await repo.findInstance(trx, input.parentInstanceId);
        if (!parent)
          throw validationFailed([
            { path: 'parentInstanceId', message: `no instance ${input.parentInstanceId}` },
          ]);
        // A Level-5 instance's observer is its Level-8 parent; observers nest under observers.
        if (Number(parent.level) !== 8)
          throw validationFailed([
            { path: 'parentInstanceId', message: 'the parent must be a Level-8 observer' },
          ]);
      }
      let row: repo.InstanceRow;
      try {
        row = await repo.insertInstance(trx, {
          name: input.name,
          level: input.level,
          source: input.source,
          personaId: input.personaId ?? null,
          parentInstanceId: input.parentInstanceId ?? null,
          stateMachineInstanceId: input.stateMachineInstanceId ?? null,
          channelId: input.channelId ?? null,
          userId: input.userId ?? null,
          metadata: input.metadata ?? {},
        });
      } catch (err) {
        if (isForeignKeyViolation(err))
          throw validationFailed([{ path: 'userId', message: `no user ${input.userId}` }]);
        throw err;
      }
      // Awaited: the event touches the instance, read back next.
      await this.timeline.record(uow, {
        eventType: 'instance_created',
        eventText: `Instance "${row.name}" (Level ${row.level}, ${row.source}) registered`,
        userId: input.userId ?? actorId,
        instanceId: row.id,
        metadata: { createdByUserId: actorId },
      });
      return toInstance((await repo.findInstance(trx, row.id))!);
    });
  }

  list(f: Parameters<typeof repo.listInstances>[1]) {
    return repo
      .listInstances(this.db, f)
      .then(({ rows, total }) => ({ instances: rows.map(toInstance), total }));
  }

  /** The observers (Level-8 instances) by id: every one, or only those `ownerId` owns. */
  async observers(ownerId: number | undefined): Promise<Instance[]> {
    return (await repo.listObservers(this.db, ownerId)).map(toInstance);
  }

  async get(id: number): Promise<Instance> {
    const row = await repo.findInstance(this.db, id);
    if (!row) throw notFound('instance');
    return toInstance(row);
  }

  /** Changes an instance. `opts.event`, when given, is recorded for it in the same transaction
   * (after the activity change's own event); `opts.metadata` merges into its metadata instead of
   * replacing it. */
  async patch(
    id: number,
    changes: PatchInstanceInput,
    opts: {
      event?: Omit<RecordInput, 'instanceId'> | undefined;
      mergeMetadata?: Record<string, unknown> | undefined;
    } = {},
  ): Promise<Instance> {
    return transaction(this.db, async (uow) => {
      const before = await repo.findInstance(uow.trx, id);
      if (!before) throw notFound('instance');
      const merged = opts.mergeMetadata
        ? { ...changes, metadata: { ...before.metadata, ...opts.mergeMetadata } }
        : changes;
      const instance = await this.patchRow(uow, id, before, merged);
      // Written at commit, with the activity change's event when there is one.
      if (opts.event) this.timeline.record(uow, { ...opts.event, instanceId: id });
      return instance;
    });
  }

  private async patchRow(
    uow: UnitOfWork,
    id: number,
    before: repo.InstanceRow,
    changes: PatchInstanceInput,
  ): Promise<Instance> {
    const { trx } = uow;
    let row: repo.InstanceRow | undefined;
    try {
      row = await repo.updateInstance(trx, id, {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.isActive !== undefined ? { is_active: changes.isActive } : {}),
        ...(changes.metadata !== undefined ? { metadata: changes.metadata } : {}),
        ...(changes.personaId !== undefined ? { persona_id: changes.personaId } : {}),
        ...(changes.stateMachineInstanceId !== undefined
          ? { state_machine_instance_id: changes.stateMachineInstanceId }
          : {}),
        ...(changes.channelId !== undefined ? { channel_id: changes.channelId } : {}),
        ...(changes.userId !== undefined ? { user_id: changes.userId } : {}),
      });
    } catch (err) {
      if (isForeignKeyViolation(err))
        throw validationFailed([{ path: 'userId', message: `no user ${changes.userId}` }]);
      throw err;
    }
    if (changes.userId !== undefined && changes.userId !== Number(before.user_id))
      this.timeline.announceOwnerChange(id, uow);
    if (changes.isActive !== undefined && changes.isActive !== before.is_active) {
      // Every change of activity is an event, so an instance's past can be rebuilt (5D).
      // Awaited: the event touches the instance, read back next.
      await this.timeline.record(uow, {
        eventType: ACTIVITY_CHANGED_EVENT,
        eventText: `Instance "${row!.name}" ${changes.isActive ? 'activated' : 'deactivated'}`,
        userId: row!.user_id,
        instanceId: id,
        metadata: { isActive: changes.isActive },
      });
      const instance = toInstance((await repo.findInstance(trx, id))!);
      await this.timeline.announceActivity(instance, uow);
      return instance;
    }
    return toInstance(row!);
  }

  /** `/observer` admission: only a CSO, an admin, or the observer's owner (contract: "Real
   * time"). An observer the caller may not see is `forbidden`, never "not found" (no oracle). */
  async authorizeWatcher(user: UserPrincipal, observerId: number): Promise<Instance> {
    const row = await repo.findInstance(this.db, observerId);
    const allowed = user.role === 'cso' || user.admin || (row !== undefined && row.user_id === user.id);
    if (!allowed)
      throw new AppError(
        'forbidden',
        'Only a CSO, an administrator or the observer\u2019s owner may watch this observer',
      );
    if (!row || Number(row.level) !== 8) throw new AppError('not_found', `No observer ${observerId}`);
    return toInstance(row);
  }
}
