// Items, inventories and energy coins (spec: "Item and user inventory", "Inventory endpoints"
// rules 1-4). Every change appends to the economy ledger (who, why, before, after, idempotency
// key) in the same transaction, so balances can be audited and reconstructed at any time.
import { type Db, type Executor, transaction } from '../../platform/db/database.js';
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import type { TimelineEvent, TimelineService } from '../timeline/index.js';
import type { UsersService } from '../users/index.js';
import { once, type IdempotencyClaim } from '../../platform/http/idempotency.js';
import * as repo from './inventory.repository.js';
import {
  changeInRange,
  currencyAllowed,
  inventorySummary,
  itemChange,
  MAX_BALANCE,
  MAX_CHANGE,
  MAX_HELD,
} from './inventory.rules.js';
import {
  DirectorCommands,
  type ChangeContext,
  type CurrencyChange,
  type DirectorChange,
  type ItemChange,
} from './inventory.director.js';
import type { InventoryView, Item, ItemInput, ModifyInput } from './inventory.schemas.js';
import type { InventoryChanged } from './inventory.updates.js';

function toItem(r: repo.ItemRow): Item {
  return { id: r.id, name: r.name, description: r.description, type: r.type, metadata: r.metadata };
}

function checkChange(n: number, path: string) {
  if (!changeInRange(n))
    throw validationFailed([
      { path, message: `must be a non-zero integer of at most ${MAX_CHANGE} either way` },
    ]);
}

/** A user's economy at a past time (the observer's 5D state). */
export interface EconomyStateAt {
  userId: number;
  energy_coins: number;
  items: { item_id: number; name: string; quantity: number }[];
}

export class InventoryService {
  constructor(
    private readonly db: Db,
    private readonly timeline: TimelineService,
    /** Owner of the user row, where the balance column lives: its writes go through it. */
    private readonly users: UsersService,
    /** Told of each director change once it committed (the player's sockets hear it). */
    announce: (change: InventoryChanged) => void = () => undefined,
  ) {
    this.director = new DirectorCommands(db, timeline, users, this, announce);
  }

  /** The director's tool commands (inventory.director.ts). */
  private readonly director: DirectorCommands;

  /** Appends one change to the ledger (every inventory and currency change does). For the
   * director's commands (LedgerCore), as are applyCurrency and applyItem. */
  async appendLedger(
    trx: Executor,
    change: { userId: number; itemId: number | null; delta: number; before: number; after: number },
    ctx: ChangeContext,
    timelineEventId: number | null,
  ): Promise<number> {
    const { id } = await repo.appendLedger(trx, {
      ...change,
      kind: change.itemId === null ? 'currency' : 'item',
      actorUserId: ctx.actorUserId ?? null,
      actorKind: ctx.actorKind ?? 'system',
      reason: ctx.reason ?? '',
      idempotencyKey: ctx.idempotencyKey ?? null,
      timelineEventId,
    });
    return id;
  }

  // ---- rule 2: currency -------------------------------------------------------------------

  async applyCurrency(
    trx: Executor,
    userId: number,
    amount: number,
  ): Promise<{ before: number; after: number }> {
    checkChange(amount, 'amount');
    const after = await this.users.addToBalance(userId, amount, trx, MAX_BALANCE);
    if (after !== undefined) return { before: after - amount, after };
    // Refused, or the user is missing. Under READ COMMITTED another change may have committed
    // since, so decide again holding the row lock: the answer's `balance` is then exact. The
    // balance stays within MAX_BALANCE, so every stored figure stays readable.
    const balance = await this.users.balance(userId, trx, true);
    if (balance === undefined) throw notFound('user');
    if (!currencyAllowed(balance, amount))
      throw new AppError(
        'insufficient_funds',
        `The balance is ${balance}; a change of ${amount} would take it below 0`,
        { balance },
      );
    if (balance + amount > MAX_BALANCE)
      throw new AppError(
        'conflict',
        `The balance is ${balance}; a change of ${amount} would take it above the maximum ${MAX_BALANCE}`,
        { balance, maxBalance: MAX_BALANCE },
      );
    const retried = (await this.users.addToBalance(userId, amount, trx, MAX_BALANCE))!;
    return { before: retried - amount, after: retried };
  }

  /** spec: inventory rule 2, in the caller's transaction (row lock; never below 0, else 409
   * insufficient_funds with the current `balance`). Appends to the ledger. */
  async modifyCurrencyIn(
    trx: Executor,
    userId: number,
    amount: number,
    ctx: ChangeContext = {},
    timelineEventId: number | null = null,
  ): Promise<CurrencyChange> {
    const { before, after } = await this.applyCurrency(trx, userId, amount);
    const ledgerId = await this.appendLedger(
      trx,
      { userId, itemId: null, delta: amount, before, after },
      ctx,
      timelineEventId,
    );
    return { userId, amount, before, after, ledgerId };
  }

  /** spec: inventory rule 2 in a transaction of its own. */
  modifyCurrency(userId: number, amount: number, ctx: ChangeContext = {}): Promise<CurrencyChange> {
    return transaction(this.db, ({ trx }) => this.modifyCurrencyIn(trx, userId, amount, ctx));
  }

  // ---- rule 1: items ----------------------------------------------------------------------

  async applyItem(
    trx: Executor,
    userId: number,
    itemId: number,
    quantity: number,
  ): Promise<{ before: number; after: number }> {
    checkChange(quantity, 'quantity');
    if (!(await repo.findItem(trx, itemId))) throw notFound('item');
    if (!(await this.users.exists(userId, trx))) throw notFound('user');
    if (quantity > 0) {
      // Insert-or-add in one statement: a missing record is created, atomically; never past
      // MAX_HELD (then nothing changes).
      const added = await repo.addHeld(trx, userId, itemId, quantity, MAX_HELD);
      if (added) return { before: Number(added.quantity) - quantity, after: Number(added.quantity) };
      const held = Number((await repo.heldForUpdate(trx, userId, itemId))?.quantity ?? 0);
      throw new AppError(
        'conflict',
        `The user holds ${held}; adding ${quantity} would pass the maximum ${MAX_HELD}`,
        { quantity: held, maxQuantity: MAX_HELD },
      );
    }
    const held = await repo.heldForUpdate(trx, userId, itemId);
    const outcome = itemChange(held ? Number(held.quantity) : null, quantity);
    switch (outcome.kind) {
      case 'insufficient':
        throw new AppError(
          'insufficient_quantity',
          `The user holds ${outcome.held}; cannot remove ${-quantity}`,
          { quantity: outcome.held },
        );
      case 'delete':
        await repo.deleteHeld(trx, userId, itemId);
        return { before: -quantity, after: 0 };
      case 'insert':
      case 'update':
        await repo.setHeld(trx, userId, itemId, outcome.after);
        return { before: outcome.after - quantity, after: outcome.after };
    }
  }

  /** spec: inventory rule 1, in the caller's transaction: positive adds, negative removes; a
   * missing record is created; reaching 0 removes the record; removing more than held is 409
   * insufficient_quantity with the held `quantity`. Appends to the ledger. */
  async modifyInventoryIn(
    trx: Executor,
    userId: number,
    itemId: number,
    quantity: number,
    ctx: ChangeContext = {},
    timelineEventId: number | null = null,
  ): Promise<ItemChange> {
    const { before, after } = await this.applyItem(trx, userId, itemId, quantity);
    const ledgerId = await this.appendLedger(
      trx,
      { userId, itemId, delta: quantity, before, after },
      ctx,
      timelineEventId,
    );
    return { userId, itemId, quantity, before, after, ledgerId };
  }

  /** spec: inventory rule 1 in a transaction of its own. */
  modifyInventory(
    userId: number,
    itemId: number,
    quantity: number,
    ctx: ChangeContext = {},
  ): Promise<ItemChange> {
    return transaction(this.db, ({ trx }) => this.modifyInventoryIn(trx, userId, itemId, quantity, ctx));
  }

  // ---- rule 3: the director's tool commands -------------------------------------------------

  /** The director's `modifyCurrency(amount)` tool (inventory.director.ts). */
  directorModifyCurrency(
    input: DirectorChange & { amount: number },
  ): Promise<{ change: CurrencyChange; event: TimelineEvent }> {
    return this.director.currency(input);
  }

  /** The director's `modifyInventory(itemId, quantity)` tool (inventory.director.ts). */
  directorModifyInventory(
    input: DirectorChange & { itemId: number; quantity: number },
  ): Promise<{ change: ItemChange; event: TimelineEvent }> {
    return this.director.inventory(input);
  }

  /** Records a tool call refused by its character's limits (inventory.director.ts). */
  directorRefused(input: DirectorChange & { tool: string; refusal: string; detail: string; args: unknown }) {
    return this.director.refused(input);
  }

  /** What a character changed for a player today (UTC): of the currency, or of every item. */
  directorUsedToday(userId: number, actorUserId: number, kind: 'currency' | 'item'): Promise<number> {
    return this.director.usedToday(userId, actorUserId, kind);
  }

  // ---- the admin endpoint ----------------------------------------------------------------

  /** `POST /api/inventory/modify`: one change, then the user's inventory; with an idempotency
   * claim, a repeated request replays the first answer (a refusal such as insufficient_funds
   * too) and changes nothing. */
  adminModify(
    input: ModifyInput,
    actorUserId: number,
    claim: IdempotencyClaim | undefined,
  ): Promise<{ value: InventoryView; replayed: boolean }> {
    return once(this.db, claim, async ({ trx }) => {
      const ctx: ChangeContext = {
        actorUserId,
        actorKind: 'admin',
        reason: 'admin modify',
        idempotencyKey: claim?.key ?? null,
      };
      if ('itemId' in input)
        await this.modifyInventoryIn(trx, input.userId, input.itemId, input.quantity, ctx);
      else await this.modifyCurrencyIn(trx, input.userId, input.amount, ctx);
      return this.inventory(input.userId, trx);
    });
  }

  // ---- reading -----------------------------------------------------------------------------

  /** The user's items with details and the energy coin balance. */
  async inventory(userId: number, executor: Executor = this.db): Promise<InventoryView> {
    // The balance is on the user row (the users module's); both reads at once, outside a
    // transaction in one statement with the caller's other reads (read-together.ts).
    const [balance, rows] = await Promise.all([
      this.users.balance(userId, executor),
      executor === this.db ? repo.heldItemsTogether(this.db, userId) : repo.heldItems(executor, userId),
    ]);
    if (balance === undefined) throw notFound('user');
    return {
      items: rows.map((i) => ({
        item_id: i.item_id,
        name: i.name,
        description: i.description,
        type: i.type,
        metadata: i.metadata,
        quantity: Number(i.quantity),
      })),
      energy_coins: balance,
    };
  }

  /** spec: inventory rule 4. The prompt's inventory summary. */
  async promptSummary(userId: number, executor: Executor = this.db): Promise<string> {
    const inv = await this.inventory(userId, executor);
    return inventorySummary(inv.items, inv.energy_coins);
  }

  /** The ledger of one user, oldest first (audits and tests). */
  ledger(
    userId: number,
    f: { kind?: 'currency' | 'item'; itemId?: number } = {},
    executor: Executor = this.db,
  ) {
    return repo.ledger(executor, userId, f);
  }

  /** Balances and items as they were at `at` (ISO 8601), rebuilt from the ledger: each user's
   * last change of each up to then (a change a microsecond later is not in it). A user with no
   * change by then has 0 and no items. In the order of `userIds`. */
  async stateAt(userIds: number[], at: string, executor: Executor = this.db): Promise<EconomyStateAt[]> {
    if (userIds.length === 0) return [];
    const [balances, items] = await Promise.all([
      repo.balancesAt(executor, userIds, at),
      repo.itemsAt(executor, userIds, at),
    ]);
    const balance = new Map(balances.map((b) => [Number(b.user_id), Number(b.balance)]));
    return userIds.map((userId) => ({
      userId,
      energy_coins: balance.get(userId) ?? 0,
      items: items
        .filter((i) => Number(i.user_id) === userId)
        .map((i) => ({ item_id: Number(i.item_id), name: i.name, quantity: Number(i.quantity) })),
    }));
  }

  // ---- items -------------------------------------------------------------------------------

  async createItem(input: ItemInput): Promise<Item> {
    return toItem(
      await repo.insertItem(this.db, {
        name: input.name,
        description: input.description,
        type: input.type,
        metadata: input.metadata ?? {},
      }),
    );
  }

  /** The items with these ids that exist, in id order (names for a character's tool description). */
  async itemsNamed(ids: readonly number[]): Promise<{ id: number; name: string }[]> {
    return ids.length === 0 ? [] : repo.itemNames(this.db, ids);
  }

  async getItem(id: number): Promise<Item> {
    const r = await repo.findItem(this.db, id);
    if (!r) throw notFound('item');
    return toItem(r);
  }

  async listItems(p: { limit: number; offset: number; type?: string | undefined }) {
    const { rows, total } = await repo.listItems(this.db, p);
    return { items: rows.map(toItem), total };
  }

  async replaceItem(id: number, input: ItemInput): Promise<Item> {
    const r = await repo.updateItem(this.db, id, {
      name: input.name,
      description: input.description,
      type: input.type,
      metadata: input.metadata ?? {},
    });
    if (!r) throw notFound('item');
    return toItem(r);
  }

  /** Deleting an item removes it from every inventory (the ledger keeps the history). */
  async deleteItem(id: number): Promise<void> {
    const r = await repo.deleteItem(this.db, id);
    if (Number(r.numDeletedRows) === 0) throw notFound('item');
  }
}
