// Persona sessions (contract: "Persona sessions"): a user's session with the Observer, Sister or
// Worker persona of an observer, one per user, observer and persona, resumed on a second create.
// Each session has a conversation of its own; the chat turn asks `forTurn` for the session named
// by `chatMessage.personaSessionId` and takes its conversation and routing persona type from it
// (the server's record, never the client's). All personas share the caller's memory: the turn
// stores the exchange as the caller's `shared` memory like any other.
import { randomUUID } from 'node:crypto';
import { transaction, type Db, type Executor } from '../../platform/db/database.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import { notFound } from '../../platform/http/problem.js';
import type { MessageRow } from '../chat/index.js';
import * as repo from './persona.repository.js';
import { personaTypeOf, sessionTitle, type Persona } from './persona.rules.js';
import type { PersonaSessionView } from './persona.schemas.js';

export interface PersonaServiceDeps {
  db: Db;
  /** Who may use an observer: as for the observer's own routes (a CSO, an admin or its owner;
   * else `forbidden`, unknown ids too; an allowed caller naming no Level-8 instance: `not_found`). */
  authorizeObserver(user: UserPrincipal, observerId: number): Promise<{ id: number; name: string }>;
  rootObserverId(): Promise<number>;
  /** The chat module's conversations: a session's own one, started in the session's
   * transaction, and its history (the owner's only). */
  conversations: {
    start(executor: Executor, userId: number, title: string): Promise<{ id: number }>;
    history(userId: number, conversationId: number, limit: number, before?: number): Promise<MessageRow[]>;
  };
}

function view(r: repo.SessionRow): PersonaSessionView {
  return {
    id: r.id,
    persona: r.persona,
    personaType: personaTypeOf(r.persona),
    observerId: r.observer_id,
    userId: r.user_id,
    conversationId: r.conversation_id,
    createdAt: r.created_at.toISOString(),
    lastActiveAt: r.last_active_at.toISOString(),
  };
}

export class PersonaService {
  constructor(private readonly d: PersonaServiceDeps) {}

  /** The caller's session with this persona of this observer (default the root): a new one
   * (`created`), or theirs resumed. */
  async create(
    user: UserPrincipal,
    input: { persona: Persona; observerId?: number | undefined },
  ): Promise<{ session: PersonaSessionView; created: boolean }> {
    const observerId = input.observerId ?? (await this.d.rootObserverId());
    const observer = await this.d.authorizeObserver(user, observerId);
    const resumed = await repo.touchSession(this.d.db, user.id, { observerId, persona: input.persona });
    if (resumed) return { session: view(resumed), created: false };
    try {
      const row = await transaction(this.d.db, async ({ trx }) => {
        const conversation = await this.d.conversations.start(
          trx,
          user.id,
          sessionTitle(input.persona, observer.name),
        );
        return repo.insertSession(trx, {
          id: randomUUID(),
          userId: user.id,
          observerId,
          persona: input.persona,
          conversationId: conversation.id,
        });
      });
      return { session: view(row), created: true };
    } catch (err) {
      // A create of the same session at the same moment won (its conversation was rolled back
      // with this one): this one resumes it.
      if (!isUniqueViolation(err)) throw err;
      const row = await repo.touchSession(this.d.db, user.id, { observerId, persona: input.persona });
      if (!row) throw err;
      return { session: view(row), created: false };
    }
  }

  async list(userId: number, observerId: number | undefined): Promise<PersonaSessionView[]> {
    return (await repo.listSessions(this.d.db, userId, observerId)).map(view);
  }

  /** The session's messages, as the assistant's history answers them; unknown or another user's
   * session: not found. */
  async history(userId: number, sessionId: string, limit: number, before: number | undefined) {
    const s = await repo.findSession(this.d.db, userId, sessionId);
    if (!s) throw notFound('persona session');
    return {
      session: view(s),
      messages: await this.d.conversations.history(userId, s.conversation_id, limit, before),
    };
  }

  /** The chat turn's port: the caller's session (its activity touched) as the turn needs it, or
   * undefined when the id is unknown or another user's. */
  async forTurn(userId: number, sessionId: string, opts: { touch?: boolean } = {}) {
    // A prompt preview reads the session without touching it (nothing is stored).
    const s =
      opts.touch === false
        ? await repo.findSession(this.d.db, userId, sessionId)
        : await repo.touchSession(this.d.db, userId, { id: sessionId });
    return (
      s && {
        sessionId: s.id,
        persona: s.persona,
        personaType: personaTypeOf(s.persona),
        conversationId: s.conversation_id,
      }
    );
  }
}
