// One write, as one object: the unit of work that `transaction()` (database.ts) opens for every
// write. It holds the transaction (`uow.trx`) and collects what the write causes, each kind of item
// for its owner to write at commit in as few statements as the database allows: the timeline's
// events in one insert, the jobs in one insert per queue, and so on. Work that must wait for the
// commit (a bus event, a socket notice, a worker woken) is `afterCommit`: it runs only once the
// unit committed, never for a rolled-back one.
//
// Kinds are declared by their owners (declaration merging, as the bus's AppEvents) and defined at
// start-up (startup/platform.ts, startup/writes.ts): `define` names the owner's flusher, `onFlush`
// adds a subscriber that sees what a flush wrote, in the same transaction. A subscriber adds items of its own (the
// webhooks' deliveries and jobs for the events just written), flushed in the next round, so what
// must commit exactly with the events does, and a subscriber that throws rolls the unit back.
//
// An item added is answered once flushed: `await timeline.record(uow, …)` flushes at once (what the
// unit collected so far, in one round); an item not awaited is flushed at commit with the rest.
import type { Transaction } from 'kysely';
import type { Database } from './schema.js';
import { together } from './together.js';
import { sql } from 'kysely';

/** What a unit of work collects, by kind: `item` is what is added, `result` what the flush answers
 * for it. Each owner declares its kind:
 *   declare module '../../platform/db/unit-of-work.js' {
 *     interface UnitOfWorkKinds { timeline: { item: RecordInput; result: TimelineEvent } }
 *   } */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface UnitOfWorkKinds {}

export type UnitKind = Extract<keyof UnitOfWorkKinds, string>;
type ItemOf<K extends UnitKind> = UnitOfWorkKinds[K] extends { item: infer I } ? I : never;
type ResultOf<K extends UnitKind> = UnitOfWorkKinds[K] extends { result: infer R } ? R : never;

/** Writes every item of a kind the round holds, and answers each item's result in their order. */
export type Flusher<K extends UnitKind> = (
  uow: UnitOfWork,
  items: readonly ItemOf<K>[],
) => Promise<readonly ResultOf<K>[]>;
/** Called with what a round wrote of a kind, in the order added. It may add items (flushed in the
 * next round) but must not await one: that would wait for the round it runs in. */
export type Subscriber<K extends UnitKind> = (
  uow: UnitOfWork,
  flushed: readonly ResultOf<K>[],
) => Promise<void>;

type AnyFlusher = (uow: UnitOfWork, items: readonly unknown[]) => Promise<readonly unknown[]>;
type AnySubscriber = (uow: UnitOfWork, flushed: readonly unknown[]) => Promise<void>;

/** The kinds a database's units collect: their flushers and subscribers, in definition order. */
export class UnitOfWorkRegistry {
  readonly flushers = new Map<string, AnyFlusher>();
  readonly subscribers = new Map<string, AnySubscriber[]>();

  /** The owner's flusher of a kind (one per kind). */
  define<K extends UnitKind>(kind: K, flusher: Flusher<K>): void {
    if (this.flushers.has(kind)) throw new Error(`the unit-of-work kind ${kind} is defined twice`);
    this.flushers.set(kind, flusher as AnyFlusher);
  }

  /** A subscriber of a kind's flush, called after those before it. */
  onFlush<K extends UnitKind>(kind: K, subscriber: Subscriber<K>): void {
    const list = this.subscribers.get(kind) ?? [];
    list.push(subscriber as AnySubscriber);
    this.subscribers.set(kind, list);
  }
}

const registries = new WeakMap<object, UnitOfWorkRegistry>();

/** The registry of a database's units of work (its kinds defined at start-up). */
export function unitOfWorkRegistry(db: object): UnitOfWorkRegistry {
  let registry = registries.get(db);
  if (!registry) registries.set(db, (registry = new UnitOfWorkRegistry()));
  return registry;
}

interface Entry {
  item: unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** An item's answer: awaiting it flushes the unit (see the header). */
export class Flushed<T> implements PromiseLike<T> {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly answer: Promise<T>,
  ) {
    // An item not awaited is not lost on failure: its flush fails the unit, whose error
    // `transaction()` throws to the write's caller; this only keeps the unawaited copy from being
    // reported as unhandled.
    answer.catch(() => undefined);
  }

  then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.uow
      .flush()
      .then(() => this.answer)
      .then(onFulfilled, onRejected);
  }
}

export class UnitOfWork {
  private pending = new Map<string, Entry[]>();
  private sent: Promise<unknown>[] = [];
  private after: (() => void)[] = [];
  /** The flush running, if any: flushes run one after another. */
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    readonly trx: Transaction<Database>,
    private readonly registry: UnitOfWorkRegistry,
  ) {}

  /** Adds an item of a kind, written at the next flush (at commit, or when it is awaited). */
  add<K extends UnitKind>(kind: K, item: ItemOf<K>): Flushed<ResultOf<K>> {
    if (!this.registry.flushers.has(kind)) throw new Error(`no flusher of unit-of-work kind ${kind}`);
    const answer = new Promise<unknown>((resolve, reject) => {
      const list = this.pending.get(kind) ?? [];
      list.push({ item, resolve, reject });
      this.pending.set(kind, list);
    });
    return new Flushed(this, answer as Promise<ResultOf<K>>);
  }

  /** A statement made now and not waited for here: the transaction runs it in the order made,
   * while the caller goes on; the unit waits for it (and fails with it) at its next flush. */
  send<T>(statement: Promise<T>): Promise<T> {
    // Its failure is not dropped: the next flush awaits it and fails the unit with it. Until then
    // it is handled here, so a caller that never awaits it raises no unhandled rejection.
    statement.catch(() => undefined);
    this.sent.push(statement);
    return statement;
  }

  /** Runs `cb` once the unit committed (never for a rollback); a failing callback is ignored. */
  afterCommit(cb: () => void): void {
    this.after.push(cb);
  }

  /** Writes what the unit collected: every kind pending in one round (their flushers sent
   * together), then each kind's subscribers in turn, and again while they added items; then waits
   * for the statements sent. The first failure is the unit's. */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.rounds());
    // The next flush waits for this one to end, not to succeed: a failure reaches this flush's
    // caller through `run` (and fails the unit), so the chain itself only needs to settle.
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async rounds(): Promise<void> {
    while (this.pending.size > 0) {
      const round = [...this.pending];
      this.pending = new Map();
      const written = await together(round.map(([kind, entries]) => this.write(kind, entries)));
      for (const [i, [kind]] of round.entries())
        for (const subscriber of this.registry.subscribers.get(kind) ?? [])
          await subscriber(this, written[i]!);
    }
    const sent = this.sent;
    this.sent = [];
    await together(sent);
  }

  private async write(kind: string, entries: Entry[]): Promise<readonly unknown[]> {
    try {
      const results = await this.registry.flushers.get(kind)!(
        this,
        entries.map((e) => e.item),
      );
      entries.forEach((e, i) => e.resolve(results[i]));
      return results;
    } catch (err) {
      for (const e of entries) e.reject(err);
      throw err;
    }
  }

  /** Runs `fn` and flushes what it added under a savepoint: should either throw, the database
   * returns to the savepoint and what `fn` collected (items and after-commit work) is dropped, and
   * the error is thrown on; the unit itself goes on. */
  async savepoint<T>(fn: () => Promise<T>): Promise<T> {
    await this.flush();
    const afterKept = this.after.length;
    await sql`savepoint unit_of_work`.execute(this.trx);
    try {
      const value = await fn();
      await this.flush();
      return value;
    } catch (err) {
      for (const entries of this.pending.values()) for (const e of entries) e.reject(err);
      this.pending = new Map();
      // Waited for only so none runs after the rollback to the savepoint; their own failures are
      // part of what is rolled back, and `err` is what the caller hears.
      await together(this.sent).catch(() => undefined);
      this.sent = [];
      this.after.length = afterKept;
      await sql`rollback to savepoint unit_of_work`.execute(this.trx);
      throw err;
    }
  }

  /** Called by `transaction()` once the unit committed. */
  committed(): void {
    for (const cb of this.after) {
      try {
        cb();
      } catch {
        // An after-commit listener failing must not turn a committed change into an error.
      }
    }
  }
}
