// The director's tool commands (spec: inventory rule 3): a change, its timeline event and its
// ledger entry in one transaction. A caller's `guard` sees, with the player's row locked, how much
// the same character already changed for the player today, and may refuse the change: limits
// that two concurrent turns cannot both slip past.
import { type Db, type Executor, transaction } from '../../platform/db/database.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import type { TimelineEvent, TimelineService } from '../timeline/index.js';
import type { UsersService } from '../users/index.js';
import * as repo from './inventory.repository.js';
import type { LedgerKind } from './inventory.tables.js';
import { changed, type InventoryChanged } from './inventory.updates.js';

/** Who made a change and why; stored in the ledger. */
export interface ChangeContext {
  actorUserId?: number | null | undefined;
  /** 'admin', 'director', 'system', … */
  actorKind?: string | undefined;
  reason?: string | undefined;
  idempotencyKey?: string | null | undefined;
}

export interface CurrencyChange {
  userId: number;
  amount: number;
  before: number;
  after: number;
  ledgerId: number;
}

export interface ItemChange {
  userId: number;
  itemId: number;
  quantity: number;
  before: number;
  after: number;
  ledgerId: number;
}

/** Arguments of the director's tool commands (spec: inventory rule 3). */
export interface DirectorChange {
  /** The player whose inventory changes. */
  userId: number;
  /** The character (assistant or NPC) that issued the command. */
  actorUserId: number | null;
  /** The registry instance the conversation runs in, if any (links the event to its observer). */
  instanceId?: number | null | undefined;
  reason?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  /** Runs in the change's transaction with the player's row locked, given what the actor changed
   * of this kind (the currency, or every item together) for the player since the UTC day began;
   * throwing refuses the change (nothing is written). */
  guard?: ((usedToday: number) => void) | undefined;
}

/** The ledger's core operations (InventoryService's), which the commands compose. */
export interface LedgerCore {
  applyCurrency(trx: Executor, userId: number, amount: number): Promise<{ before: number; after: number }>;
  applyItem(
    trx: Executor,
    userId: number,
    itemId: number,
    quantity: number,
  ): Promise<{ before: number; after: number }>;
  appendLedger(
    trx: Executor,
    change: { userId: number; itemId: number | null; delta: number; before: number; after: number },
    ctx: ChangeContext,
    timelineEventId: number | null,
  ): Promise<number>;
}

function directorContext(input: DirectorChange, tool: string): ChangeContext {
  return {
    actorUserId: input.actorUserId,
    actorKind: 'director',
    reason: input.reason ?? `director tool ${tool}`,
  };
}

export class DirectorCommands {
  constructor(
    private readonly db: Db,
    private readonly timeline: TimelineService,
    private readonly users: UsersService,
    private readonly core: LedgerCore,
    /** Told of each change once it committed (the player's sockets hear it). */
    private readonly announce: (change: InventoryChanged) => void,
  ) {}

  /** What `actorUserId` changed of `kind` for the user today (UTC), as the guard is given it. */
  usedToday(userId: number, actorUserId: number, kind: LedgerKind, executor: Executor = this.db) {
    return repo.directorUsedToday(executor, userId, actorUserId, kind);
  }

  private async guard(trx: Executor, input: DirectorChange, kind: LedgerKind) {
    if (!input.guard) return;
    // The player's row lock serialises their guarded changes: the sum read is the one that holds.
    await this.users.balance(input.userId, trx, true);
    input.guard(
      input.actorUserId === null ? 0 : await this.usedToday(input.userId, input.actorUserId, kind, trx),
    );
  }

  /** The director's `modifyCurrency(amount)` tool: the change, a timeline event
   * (`currency_changed`, broadcast after commit; linked to the player's own instance when the turn
   * names none) and the ledger entry, in one transaction. */
  async currency(
    input: DirectorChange & { amount: number },
  ): Promise<{ change: CurrencyChange; event: TimelineEvent }> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      await this.guard(trx, input, 'currency');
      const { before, after } = await this.core.applyCurrency(trx, input.userId, input.amount);
      const event = await this.event(
        uow,
        input,
        'currency_changed',
        `${input.amount > 0 ? 'Awarded' : 'Spent'} ${Math.abs(input.amount)} energy coins (balance ${after})`,
        { tool: 'modifyCurrency', amount: input.amount, before, after },
      );
      const ledgerId = await this.core.appendLedger(
        trx,
        { userId: input.userId, itemId: null, delta: input.amount, before, after },
        directorContext(input, 'modifyCurrency'),
        event.id,
      );
      uow.afterCommit(() => this.announce(changed(input, event.id, null, input.amount, before, after)));
      return { change: { userId: input.userId, amount: input.amount, before, after, ledgerId }, event };
    });
  }

  /** The director's `modifyInventory(itemId, quantity)` tool: the change, a timeline event
   * (`inventory_changed`) and the ledger entry, in one transaction. */
  async inventory(
    input: DirectorChange & { itemId: number; quantity: number },
  ): Promise<{ change: ItemChange; event: TimelineEvent }> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      await this.guard(trx, input, 'item');
      const { before, after } = await this.core.applyItem(trx, input.userId, input.itemId, input.quantity);
      const item = (await repo.findItem(trx, input.itemId))!;
      const event = await this.event(
        uow,
        input,
        'inventory_changed',
        `${input.quantity > 0 ? 'Gave' : 'Took'} ${Math.abs(input.quantity)} x ${item.name} (now ${after})`,
        {
          tool: 'modifyInventory',
          itemId: input.itemId,
          itemName: item.name,
          quantity: input.quantity,
          before,
          after,
        },
      );
      const ledgerId = await this.core.appendLedger(
        trx,
        { userId: input.userId, itemId: input.itemId, delta: input.quantity, before, after },
        directorContext(input, 'modifyInventory'),
        event.id,
      );
      uow.afterCommit(() =>
        this.announce(changed(input, event.id, input.itemId, input.quantity, before, after)),
      );
      const { userId, itemId, quantity } = input;
      return { change: { userId, itemId, quantity, before, after, ledgerId }, event };
    });
  }

  /** A tool call refused by the caller's limits (or its approval): a `tool_refused` event on the
   * player's timeline, nothing else. */
  refused(input: DirectorChange & { tool: string; refusal: string; detail: string; args: unknown }) {
    return transaction(this.db, (uow) =>
      this.event(uow, input, 'tool_refused', `Refused ${input.tool}: ${input.detail}`, {
        tool: input.tool,
        refusal: input.refusal,
        args: input.args,
      }),
    );
  }

  /** The change's event, written now: the ledger entry names its id. */
  private async event(
    uow: UnitOfWork,
    input: DirectorChange,
    eventType: string,
    eventText: string,
    details: Record<string, unknown>,
  ) {
    // spec: "Operations that create timeline events: … inventory and currency changes by the director".
    return await this.timeline.record(uow, {
      eventType,
      eventText,
      userId: input.userId,
      instanceId: input.instanceId ?? (await this.timeline.playerInstanceId(uow.trx, input.userId)),
      personaId: input.actorUserId,
      source: 'director',
      metadata: {
        ...input.metadata,
        ...details,
        actorUserId: input.actorUserId,
        ...(input.reason ? { reason: input.reason } : {}),
      },
    });
  }
}
