// Players own their data (contract: "Doors for games"): everything of an account as one JSON
// document, and the account's erasure: its sessions, memories, conversations and messages,
// inventory and links go with the account row (their foreign keys cascade); the economy ledger
// has no foreign key to the account and keeps its rows, so balances and audits still add up,
// under an id that names no one any more; timeline events about the account lose their user.
import { AppError } from '../../platform/http/problem.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import { verifyPassword } from '../../platform/security/secrets.js';
import type { ConversationsService } from '../chat/index.js';
import { presentMessage } from '../chat/index.js';
import type { InventoryService } from '../inventory/index.js';
import type { MemoryService } from '../memory/index.js';
import type { TimelineService } from '../timeline/index.js';
import { toProfile, type UsersService } from '../users/index.js';

/** How recent a password-less account's session must be to erase it (seconds since sign-in). */
export const RECENT_SESSION_SECONDS = 10 * 60;
const PAGE = 500;

export interface AccountDeps {
  users: UsersService;
  memory: Pick<MemoryService, 'exportOwn'>;
  conversations: Pick<ConversationsService, 'list' | 'history' | 'speakerNames'>;
  inventory: Pick<InventoryService, 'inventory' | 'ledger'>;
  timeline: Pick<TimelineService, 'list'>;
  /** The access tokens' lifetime (a token's sign-in time is its expiry less it). */
  accessTokenTtlSeconds: number;
}

export class AccountService {
  constructor(private readonly d: AccountDeps) {}

  /** Everything of the account's, as one document. */
  async export(userId: number) {
    const { users, memory, conversations, inventory, timeline } = this.d;
    const profile = toProfile(await users.get(userId));
    const memories: unknown[] = [];
    for await (const line of memory.exportOwn(userId)) memories.push(JSON.parse(line));
    const threads = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await conversations.list(userId, PAGE, offset);
      for (const c of page.rows) threads.push({ ...c, messages: await this.messages(userId, c.id) });
      if (page.rows.length < PAGE) break;
    }
    const ledger = (await inventory.ledger(userId)).map((r) => ({ ...r }));
    return {
      exportedAt: new Date().toISOString(),
      profile,
      memories,
      conversations: threads,
      inventory: await inventory.inventory(userId),
      ledger,
      timeline: await timeline.list({ userId, limit: 100_000 }),
    };
  }

  private async messages(userId: number, conversationId: number) {
    const out = [];
    for (let before: number | undefined; ;) {
      const page = await this.d.conversations.history(userId, conversationId, PAGE, before);
      const names = await this.d.conversations.speakerNames(page);
      out.unshift(...page.map((m) => presentMessage(m, names)));
      if (page.length < PAGE) return out;
      before = page[0]!.id;
    }
  }

  /** The caller erases their own account: with its password, or, for an account without one (a
   * game's player), from a session signed in within RECENT_SESSION_SECONDS. */
  async eraseOwn(caller: UserPrincipal, password: string | undefined): Promise<void> {
    const row = await this.d.users.get(caller.id);
    if (row.password_hash) {
      if (password === undefined || !(await verifyPassword(row.password_hash, password)))
        throw new AppError('invalid_credentials', 'The password is not correct');
    } else {
      const signedIn = caller.exp - this.d.accessTokenTtlSeconds;
      if (Date.now() / 1000 - signedIn > RECENT_SESSION_SECONDS)
        throw new AppError(
          'forbidden',
          'Sign in again (a session of the last 10 minutes) to erase the account',
          {
            reason: 'session_not_recent',
          },
        );
    }
    await this.erase(caller.id);
  }

  /** An administrator erases an account; characters are deleted as characters (/api/admin/data/npcs). */
  async eraseByAdmin(adminId: number, userId: number): Promise<void> {
    // not_found when there is no such user; any other failure is the request's 5xx.
    const row = await this.d.users.get(userId);
    if (row.account_type === 'npc')
      throw new AppError('conflict', 'A character is deleted with DELETE /api/admin/data/npcs/{id}');
    if (row.id === adminId)
      throw new AppError('conflict', 'Erase your own account with DELETE /api/user/account');
    await this.erase(userId);
  }

  private erase(userId: number): Promise<void> {
    // One statement: the cascades take everything that is the account's; the account cache is
    // told, so its access tokens stop working on every node at once.
    return this.d.users.remove(userId);
  }
}
