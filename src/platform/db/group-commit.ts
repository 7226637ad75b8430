// Units of work written together (group commit), for a stream of small independent writes (the
// sync ingest). A unit asked for while another group is being written waits for it, and all those
// that waited are written next as one unit: each member's work adds its items to the shared unit,
// which flushes them (one insert for all their events) and commits once. Under load the
// statements per write fall with the queue instead of the queue growing behind one transaction
// per write (on the embedded database's single connection, each statement of each transaction
// waits its turn); alone, a write is a unit of its own at once.
//
// A member's work must not await what it adds (that would flush the group at that member): it
// answers the item's answer unawaited, read once the group has committed. Should the group fail
// with a refusal (`isRefusal`: raised by a statement, before the commit), each member is written
// again in a unit of its own, so each request gets its own answer; any other failure (the database
// gone, a commit whose outcome is unknown) is every member's answer. A member that waited for its
// group longer than `maxWaitMs` is refused with `DatabaseBusyError` (503), as it would have been
// waiting for a connection of its own.
import { DatabaseBusyError, transaction, type Db } from './database.js';
import type { UnitOfWork } from './unit-of-work.js';

export type GroupWork<T> = (uow: UnitOfWork) => PromiseLike<T>;

interface Member {
  work: GroupWork<unknown>;
  /** When it was asked for (Date.now()). */
  at: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitOptions {
  /** Members of one group at most. */
  max: number;
  maxWaitMs: number;
  /** Whether a group's failure may be one member's refusal (each is then written alone). */
  isRefusal(err: unknown): boolean;
}

export class GroupCommit {
  private queued: Member[] = [];
  private writing = false;

  constructor(
    private readonly db: Db,
    private readonly o: GroupCommitOptions,
  ) {}

  /** Runs `work` in a unit of work, shared with the others queued meanwhile; answers its item. */
  run<T>(work: GroupWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ work, at: Date.now(), resolve: resolve as (value: unknown) => void, reject });
      if (!this.writing) void this.writeQueued();
    });
  }

  private async writeQueued() {
    this.writing = true;
    try {
      while (this.queued.length > 0) {
        const group = this.fresh(this.queued.splice(0, this.o.max));
        if (group.length === 0) continue;
        if (group.length === 1 || !(await this.writeGroup(group)))
          for (const m of group)
            await transaction(this.db, async (uow) => m.work(uow)).then(m.resolve, m.reject);
      }
    } finally {
      this.writing = false;
    }
  }

  /** The members still within their wait; the others refused. */
  private fresh(taken: Member[]): Member[] {
    const now = Date.now();
    const group: Member[] = [];
    for (const m of taken)
      if (now - m.at > this.o.maxWaitMs) m.reject(new DatabaseBusyError(this.o.maxWaitMs, undefined));
      else group.push(m);
    return group;
  }

  /** The group as one unit: true once every member is answered, false after a refusal (nothing
   * of the group committed; its members are to be written alone). */
  private async writeGroup(group: Member[]): Promise<boolean> {
    let answers: PromiseLike<unknown>[] = [];
    try {
      await transaction(this.db, async (uow) => {
        answers = group.map((m) => m.work(uow));
      });
    } catch (err) {
      if (this.o.isRefusal(err)) return false;
      for (const m of group) m.reject(err);
      return true;
    }
    // Committed: every answer is settled, so these awaits only read them.
    for (const [i, m] of group.entries()) await Promise.resolve(answers[i]).then(m.resolve, m.reject);
    return true;
  }
}
