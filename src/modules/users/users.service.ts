// Users: profiles, admin listing and role changes, account creation (register, CLI, characters).
import type { Db, Executor } from '../../platform/db/database.js';
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

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === '23505';
}

export class UsersService {
  constructor(private readonly db: Db) {}

  async get(id: number, executor: Executor = this.db): Promise<UserRow> {
    const u = await repo.findById(executor, id);
    if (!u) throw notFound('user');
    return u;
  }

  findByEmail(email: string, executor: Executor = this.db) {
    return repo.findByEmail(executor, email);
  }

  async profile(id: number): Promise<Profile> {
    return toProfile(await this.get(id));
  }

  /** Creates an account; the role/account-type pair must be one the spec allows. */
  async create(input: CreateUserInput, executor: Executor = this.db): Promise<UserRow> {
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
      return await repo.insert(executor, {
        email,
        passwordHash,
        name,
        role,
        accountType,
        emailVerified: input.emailVerified ?? false,
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
    return this.db.transaction().execute(async (trx) => {
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
}
