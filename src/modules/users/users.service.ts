// Users: profiles, admin listing and role changes, account creation (register, CLI, characters).
import { batchedByKey } from '../../platform/db/batched.js';
import { inUnit, transaction, type Db, type Executor } from '../../platform/db/database.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import { isAllowedCombination, type AccountType, type Role } from '../../platform/security/identity.rules.js';
import { hashPassword } from '../../platform/security/secrets.js';
import * as repo from './users.repository.js';
import type { Profile } from './users.schemas.js';

export type UserRow = NonNullable<Awaited<ReturnType<typeof repo.findById>>>;

export function toProfile(u: UserRow): Profile {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    accountType: u.account_type,
    energy_coins: Number(u.energy_coins),
    emailVerified: u.email_verified,
    createdAt: u.created_at.toISOString(),
  };
}

export const MIN_PASSWORD = 8;
export const MAX_PASSWORD = 256;

export interface CreateUserInput {
  email: string | null;
  password: string | null;
  name?: string | undefined;
  role?: Role;
  accountType?: AccountType;
  emailVerified?: boolean;
}

export interface UsersServiceOptions {
  /** Says that an account's role, account type or name changed or that it is gone, through the
   * writer's unit of work (signed-in clients are judged by the account as it is now). */
  accountChanged?: (uow: UnitOfWork, id: number) => void;
  /** The per-node cache of accounts' role, account type and name that requests are judged by
   * (kept fresh by `accountChanged`): reads of who an account is outside a transaction use it. */
  cachedAccess?: (id: number) => Promise<Access | undefined> | Access | undefined;
}

export interface Access {
  role: Role;
  accountType: AccountType;
  name: string;
}

export class UsersService {
  // The read every request may make (the profile route): concurrent requests share one statement
  // (batched.ts).
  private readonly rowOf = batchedByKey(
    (ids: number[]) => repo.findByIds(this.db, ids),
    (row) => row.id,
  );

  constructor(
    private readonly db: Db,
    private readonly opts: UsersServiceOptions = {},
  ) {}

  private announce(uow: UnitOfWork, id: number) {
    this.opts.accountChanged?.(uow, id);
  }

  /** What signed-in clients may do: the accounts' role, account type and name now (the account
   * cache's batched misses, read together with their sessions). */
  accessOfMany(ids: number[]) {
    return repo.accessOfMany(this.db, ids);
  }

  async get(id: number, executor: Executor = this.db): Promise<UserRow> {
    const u = await repo.findById(executor, id);
    if (!u) throw notFound('user');
    return u;
  }

  findByEmail(email: string, executor: Executor = this.db) {
    return repo.findByEmail(executor, email);
  }

  async profile(id: number): Promise<Profile> {
    const u = await this.rowOf(id);
    if (!u) throw notFound('user');
    return toProfile(u);
  }

  /** Creates an account, in the caller's unit of work or its own; the role/account-type pair
   * must be one the spec allows. */
  async create(input: CreateUserInput, uow?: UnitOfWork): Promise<UserRow> {
    const role = input.role ?? 'carbon';
    const accountType = input.accountType ?? 'public';
    if (!isAllowedCombination(role, accountType))
      throw validationFailed([
        { path: 'accountType', message: `${accountType} is not allowed for role ${role}` },
      ]);
    const email = input.email?.trim().toLowerCase() ?? null;
    const passwordHash = input.password === null ? null : await hashPassword(input.password);
    const name = input.name?.trim() || (email ? email.split('@')[0]! : 'user');
    try {
      return await inUnit(this.db, uow, async (unit) => {
        const user = await repo.insert(unit.trx, {
          email,
          passwordHash,
          name,
          role,
          accountType,
          emailVerified: input.emailVerified ?? false,
        });
        // A node may have cached that no account had this id (a token signed for it, say).
        this.announce(unit, user.id);
        return user;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('conflict', 'An account with this email already exists');
      throw err;
    }
  }

  list(opts: Parameters<typeof repo.list>[1]) {
    return repo.list(this.db, opts);
  }

  /** Admin change of role, account type or name; the resulting pair must be allowed. */
  async patch(
    id: number,
    changes: { role?: Role | undefined; accountType?: AccountType | undefined; name?: string | undefined },
  ): Promise<UserRow> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      const current = await trx
        .selectFrom('users')
        .select(['role', 'account_type'])
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!current) throw notFound('user');
      const role = changes.role ?? current.role;
      const accountType = changes.accountType ?? current.account_type;
      if (!isAllowedCombination(role, accountType))
        throw validationFailed([
          { path: 'accountType', message: `${accountType} is not allowed for role ${role}` },
        ]);
      const updated = await repo.update(trx, id, {
        role,
        account_type: accountType,
        ...(changes.name ? { name: changes.name } : {}),
      });
      this.announce(uow, id);
      return updated!;
    });
  }

  async setPassword(id: number, password: string, executor: Executor = this.db): Promise<void> {
    await repo.update(executor, id, { password_hash: await hashPassword(password) });
  }

  /** For the admin statistics: accounts by role and account type. */
  async countByRoleAndType(): Promise<{ role: string; accountType: string; count: number }[]> {
    const rows = await repo.countByRoleAndType(this.db);
    return rows.map((u) => ({ role: u.role, accountType: u.account_type, count: Number(u.n) }));
  }

  // ---- doors for the modules that act on accounts (the users table is this module's alone) ----

  async exists(id: number, executor: Executor = this.db): Promise<boolean> {
    return (await repo.exists(executor, id)) !== undefined;
  }

  /** Renames an account (characters rename their NPC's user), in the caller's unit or its own. */
  async rename(id: number, name: string, uow?: UnitOfWork): Promise<void> {
    await inUnit(this.db, uow, async (unit) => {
      await repo.update(unit.trx, id, { name });
      this.announce(unit, id);
    });
  }

  /** Deletes an account; what references it cascades (characters delete NPCs). */
  async remove(id: number, uow?: UnitOfWork): Promise<void> {
    await inUnit(this.db, uow, async (unit) => {
      await repo.remove(unit.trx, id);
      this.announce(unit, id);
    });
  }

  /** Marks `email` verified while it is still the account's address; false when it is not. */
  async markEmailVerified(id: number, email: string, executor: Executor = this.db): Promise<boolean> {
    const r = await repo.markEmailVerified(executor, id, email);
    return Number(r.numUpdatedRows) > 0;
  }

  /** The verified owner of the address claims an account registered with it but never verified:
   * its password goes (whoever set it never proved the address). */
  async claim(id: number, executor: Executor = this.db): Promise<void> {
    await repo.claim(executor, id);
  }

  /** The first administrator (ADMIN_EMAIL, ADMIN_PASSWORD at start): a CSO with a verified email,
   * made only while no CSO exists. `exists`: there is a CSO already (this one or another);
   * `email_taken`: no CSO, but another account has the address (never promoted by this). */
  async ensureFirstAdmin(admin: {
    email: string;
    password: string;
  }): Promise<'created' | 'exists' | 'email_taken'> {
    if ((await this.firstCsoId()) !== undefined) return 'exists';
    try {
      await this.create({ ...admin, role: 'cso', accountType: 'public', emailVerified: true });
      return 'created';
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'conflict')) throw err;
      // Another node made it at the same moment, or the address belongs to someone else.
      return (await this.firstCsoId()) !== undefined ? 'exists' : 'email_taken';
    }
  }

  /** The first CSO's id (the root observer's owner), if any CSO exists. */
  async firstCsoId(executor: Executor = this.db): Promise<number | undefined> {
    return (await repo.firstCsoId(executor))?.id ?? undefined;
  }

  /** The energy coin balance, or undefined for no such user; `forUpdate` locks the row for the
   * caller's transaction. */
  async balance(id: number, executor: Executor = this.db, forUpdate = false): Promise<number | undefined> {
    // Outside a transaction: in one statement with the caller's other reads (read-together.ts).
    const row = await (forUpdate
      ? repo.balanceForUpdate(executor, id)
      : executor === this.db
        ? repo.balanceTogether(this.db, id)
        : repo.balance(executor, id));
    return row ? Number(row.energy_coins) : undefined;
  }

  /** Adds `amount` (negative to spend) in one conditional statement that never takes the balance
   * below 0 or above `max`: the new balance, or undefined when refused or the user does not exist. The economy's
   * rules and ledger are the inventory module's; this is only the column's write. */
  async addToBalance(
    id: number,
    amount: number,
    executor: Executor,
    max = Number.MAX_SAFE_INTEGER,
  ): Promise<number | undefined> {
    const row = await repo.addToBalance(executor, id, amount, max);
    return row ? Number(row.energy_coins) : undefined;
  }

  /** Who an account is (role, account type, name), or undefined when it does not exist. Outside
   * a transaction it is the account as requests see it (the per-node cache, fresh within its
   * bound); inside one, the row as the transaction sees it. */
  async identity(
    id: number,
    executor: Executor = this.db,
  ): Promise<{ id: number; role: Role; accountType: AccountType; name: string } | undefined> {
    if (executor === this.db && this.opts.cachedAccess) {
      const a = await this.opts.cachedAccess(id);
      return a && { id, role: a.role, accountType: a.accountType, name: a.name };
    }
    const u = await repo.access(executor, id);
    return u && { id, role: u.role, accountType: u.account_type, name: u.name };
  }

  /** The NPC accounts (the assistant and the characters) among `ids`, with their names. */
  async npcsAmong(ids: number[], executor: Executor = this.db): Promise<{ id: number; name: string }[]> {
    return ids.length === 0 ? [] : repo.npcsAmong(executor, ids);
  }

  /** Who each of `ids` is, by id (the ids that exist). */
  async identities(ids: number[], executor: Executor = this.db) {
    const rows = ids.length === 0 ? [] : await repo.findByIds(executor, [...new Set(ids)]);
    return new Map(
      rows.map((u) => [u.id, { id: u.id, role: u.role, accountType: u.account_type, name: u.name }]),
    );
  }
}
