// Conversations and their history: owned by one user; another user's conversation is "not found".
import { batchedByKey } from '../../platform/db/batched.js';
import { transaction, type Db, type Executor } from '../../platform/db/database.js';
import { NoticedCache, idOf } from '../../platform/db/noticed-cache.js';
import type { ChangeFeed } from '../../platform/db/notifications.js';
import { notFound, validationFailed } from '../../platform/http/problem.js';
import * as repo from './conversations.repository.js';

export type ConversationRow = Awaited<ReturnType<typeof repo.findConversation>> & {};
/** A conversation as a turn resolves it: what never changes once it is made (its last activity,
 * `updated_at`, changes with every message and is left out). */
export type ConversationRecord = Omit<NonNullable<ConversationRow>, 'updated_at'>;
export type MessageRow = Awaited<ReturnType<typeof repo.insertMessage>>;

export function presentConversation(c: ConversationRecord) {
  return {
    id: c.id,
    title: c.title,
    npcUserIds: c.npc_user_ids,
    directNpcUserId: c.direct_npc_user_id,
    createdAt: c.created_at.toISOString(),
  };
}

/** Who said a message: the player for the player's lines, else its character. */
export const speakerIdOf = (m: MessageRow) => (m.role === 'user' ? m.user_id : (m.npc_user_id ?? m.user_id));

/** A message as history answers show it; `names` gives each speaker's name (`speakerNames`), and
 * `replyName` the name every reply goes by (a persona session's persona). */
export function presentMessage(
  m: MessageRow,
  names: ReadonlyMap<number, string> = new Map(),
  replyName?: string,
) {
  const speakerId = speakerIdOf(m);
  return {
    id: m.id,
    conversationId: m.conversation_id,
    role: m.role,
    npcUserId: m.npc_user_id,
    speaker: {
      id: speakerId,
      name: (m.role === 'assistant' ? replyName : undefined) ?? names.get(speakerId) ?? '',
    },
    text: m.text,
    createdAt: m.created_at.toISOString(),
  };
}

export interface ConversationsServiceOptions {
  changes: ChangeFeed;
  /** How long a node trusts a cached conversation that no notice has dropped (RECORD_CACHE_MS). */
  cacheMs: number;
}

export class ConversationsService {
  // Every chat turn resolves its conversation first, and a conversation never changes once made
  // but for its deletion: each node keeps them by id and each user's default one
  // (noticed-cache.ts; `remove` announces a deletion, and neither cache keeps a "not found", as a
  // creation is not announced), and concurrent misses share one statement (batched.ts).
  private readonly byId: NoticedCache<number, ConversationRecord | undefined>;
  private readonly defaults: NoticedCache<number, ConversationRecord | undefined>;

  constructor(
    private readonly db: Db,
    /** Which accounts are NPCs (the users module's answer). */
    private readonly users: {
      npcsAmong(ids: number[], executor?: Executor): Promise<{ id: number; name: string }[]>;
      identities(ids: number[]): Promise<ReadonlyMap<number, { name: string }>>;
    },
    opts: ConversationsServiceOptions,
  ) {
    const cached = (channel: string, read: (key: number) => Promise<ConversationRecord | undefined>) =>
      new NoticedCache(read, opts.changes, {
        channel,
        ttlMs: opts.cacheMs,
        keyOf: idOf,
        keeps: (c) => c !== undefined,
      });
    const byId = batchedByKey(
      (ids: number[]) => repo.findConversations(this.db, ids),
      (c) => c.id,
    );
    const defaultOf = batchedByKey(
      (userIds: number[]) => repo.findDefaultConversations(this.db, userIds),
      (c) => c.user_id,
    );
    this.byId = cached('conversation_changed', byId);
    this.defaults = cached('default_conversation_changed', defaultOf);
  }

  /** A conversation of the user's; in the caller's transaction when given one. */
  async create(
    userId: number,
    input: { title?: string | undefined; npcUserIds?: number[] | undefined },
    executor: Executor = this.db,
  ) {
    const npcUserIds = [...new Set(input.npcUserIds ?? [])];
    const found = await this.users.npcsAmong(npcUserIds, executor);
    const missing = npcUserIds.filter((id) => !found.some((n) => n.id === id));
    if (missing.length)
      throw validationFailed(
        missing.map((id) => ({ path: 'body.npcUserIds', message: `user ${id} is not an NPC` })),
      );
    return repo.insertConversation(executor, { userId, title: input.title ?? '', npcUserIds });
  }

  /** Assistant messages written into the user's conversation in one statement (a training
   * simulation's turns), in the order given; in the caller's transaction when given one. */
  appendAssistantMessages(
    executor: Executor,
    conversationId: number,
    userId: number,
    messages: { npcUserId: number; text: string; metadata: Record<string, unknown> }[],
  ) {
    return repo.insertMessages(
      executor,
      conversationId,
      messages.map((m) => ({
        conversationId,
        userId,
        role: 'assistant' as const,
        npcUserId: m.npcUserId,
        text: m.text,
        metadata: m.metadata,
      })),
    );
  }

  /** A new conversation with the assistant alone, in the caller's transaction (a persona
   * session's own conversation). */
  start(executor: Executor, userId: number, title: string) {
    return repo.insertConversation(executor, { userId, title, npcUserIds: [] });
  }

  /** The caller's conversation, or their default one when no id is given. */
  async resolve(
    userId: number,
    conversationId: number | undefined,
    executor: Executor = this.db,
  ): Promise<ConversationRecord> {
    const pooled = executor === this.db;
    if (conversationId === undefined)
      // Created on first use; once it exists, the cache finds it.
      return (
        (pooled ? await this.defaults.get(userId) : undefined) ?? repo.defaultConversation(executor, userId)
      );
    const c = pooled
      ? await this.byId.get(conversationId)
      : await repo.findConversation(executor, conversationId);
    if (!c || c.user_id !== userId) throw notFound('conversation');
    return c;
  }

  /** The user's own thread with a character (a direct message's conversation), made on first use. */
  direct(userId: number, npcUserId: number, executor: Executor = this.db) {
    return repo.directConversation(executor, userId, npcUserId);
  }

  /** The user's own thread with a character, if it exists (never creates it). */
  peekDirect(userId: number, npcUserId: number) {
    return repo.findDirectConversation(this.db, userId, npcUserId);
  }

  /** The player's conversations whose memories a character may read (conversationsWith). */
  visibleTo(userId: number, npcUserIds: number[], sharedPool?: number[]) {
    return repo.conversationsWith(this.db, userId, npcUserIds, sharedPool);
  }

  /** As `resolve`, but read only: the default conversation is undefined when it does not exist
   * yet, and another user's conversation is undefined too (the caller decides the refusal). */
  async peek(userId: number, conversationId: number | undefined) {
    if (conversationId === undefined) return repo.findDefaultConversation(this.db, userId);
    const c = await repo.findConversation(this.db, conversationId);
    return c && c.user_id === userId ? c : undefined;
  }

  list(userId: number, limit: number, offset: number) {
    return repo.listConversations(this.db, userId, limit, offset);
  }

  async remove(userId: number, id: number) {
    await transaction(this.db, async (uow) => {
      const gone = await repo.deleteConversation(uow.trx, id, userId);
      if (!gone) throw notFound('conversation');
      this.byId.changedIn(uow, id);
      if (gone.is_default) this.defaults.changedIn(uow, userId);
    });
  }

  async history(userId: number, conversationId: number | undefined, limit: number, before?: number) {
    const c = await this.resolve(userId, conversationId);
    return repo.history(this.db, c.id, limit, before);
  }

  /** The names of the speakers of `messages` (the player and the characters), by id. */
  async speakerNames(messages: MessageRow[]): Promise<Map<number, string>> {
    const who = await this.users.identities([...new Set(messages.map(speakerIdOf))]);
    return new Map([...who].map(([id, u]) => [id, u.name]));
  }

  /** History as the API presents it, each message with its speaker. */
  async presentedHistory(userId: number, conversationId: number | undefined, limit: number, before?: number) {
    const rows = await this.history(userId, conversationId, limit, before);
    const names = await this.speakerNames(rows);
    return rows.map((m) => presentMessage(m, names));
  }

  /** Suggested replies produced with the conversation's last assistant response. */
  async choices(userId: number, conversationId: number | undefined): Promise<{ id: string; text: string }[]> {
    const c = await this.resolve(userId, conversationId);
    const last = await repo.lastAssistantMessage(this.db, c.id);
    const choices = (last?.metadata as { choices?: unknown } | undefined)?.choices;
    if (!Array.isArray(choices)) return [];
    return choices.filter(
      (x): x is { id: string; text: string } => typeof x?.id === 'string' && typeof x?.text === 'string',
    );
  }

  /** For the admin statistics: conversations, and messages in all, in the last `hours` and failed. */
  async stats(hours: number) {
    const [conversations, messages] = await Promise.all([
      repo.countConversations(this.db),
      repo.countMessages(this.db, hours),
    ]);
    return {
      conversations: Number(conversations.n),
      messages: {
        total: Number(messages.total),
        recent: Number(messages.recent),
        failed: Number(messages.failed),
      },
    };
  }
}
