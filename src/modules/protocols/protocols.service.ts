// Protocols: the records (seeded, listed, created and updated by admins, validated), and routing
// (spec "Protocols and routing"): which protocol a user gets, and the resolved protocol the chat
// turn composes its system prompt from.
import { batchedByKey } from '../../platform/db/batched.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { transaction, type Db, type Executor } from '../../platform/db/database.js';
import { NoticedCache } from '../../platform/db/noticed-cache.js';
import type { ChangeFeed } from '../../platform/db/notifications.js';
import { AppError, notFound } from '../../platform/http/problem.js';
import type { AccountType, Role } from '../../platform/security/identity.rules.js';
import * as repo from './protocols.repository.js';
import {
  categoryOf,
  definitionProblems,
  isGroundFloor,
  parseProtocolId,
  resolveProtocol,
  routeProtocol,
  ROUTING_FAMILIES,
  type ResolvedProtocol,
  type RoutingDecision,
  type StoredProtocol,
} from './protocols.rules.js';
import type { ProtocolCategory, ProtocolDefinition, ProtocolView } from './protocols.schemas.js';
import { GROUND_FLOOR_PROTOCOLS, SEED_PROTOCOLS } from './protocols.seeds.js';
import { reachesFurther, withinReach } from './protocols.reach.js';

type Row = NonNullable<Awaited<ReturnType<typeof repo.findById>>>;

function toView(row: Row): ProtocolView {
  const d = row.definition;
  return {
    id: row.id,
    category: categoryOf(row.id),
    version: row.version,
    builtin: row.builtin,
    immutable: isGroundFloor(row.id),
    kind: d.kind,
    name: d.name,
    description: d.description,
    template: d.kind === 'string' ? d.template : null,
    base: d.kind === 'reference' ? d.base : null,
    tone: d.tone,
    rules: d.rules,
    tools: d.tools,
    overrides: d.overrides,
    capabilities: d.capabilities,
    workflow: d.workflow ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const stored = (row: Row): StoredProtocol => ({ id: row.id, definition: row.definition });

/** A protocol read with its base (repo.findWithBase), ready for composeSystemPrompt. */
function resolvedWithBase({ row, base }: NonNullable<Awaited<ReturnType<typeof repo.findWithBase>>>) {
  if (row.definition.kind === 'reference' && !base)
    throw new Error(`protocol ${row.id} references the missing base ${row.definition.base}`);
  return resolveProtocol(stored(row), base);
}

/** 409 `immutable`: a ground-floor protocol is never changed, nor given a new version (admins too). */
export function assertMutable(id: string): void {
  if (isGroundFloor(id))
    throw new AppError(
      'immutable',
      `${id} belongs to a ground-floor protocol family: it cannot be changed or given a new version`,
    );
}

function invalid(problems: { path: string; message: string }[]): AppError {
  return new AppError('invalid_definition', 'The protocol definition does not validate', {
    errors: problems,
  });
}

/** The protocol id a chat-platform channel carries, or null. */
export type ChannelProtocolLookup = (channelId: string) => Promise<string | null>;

export interface RoutingSubject {
  id: number;
  role: Role;
  accountType: AccountType;
}

/** A user as routing sees them: role, account type and persona type as the server knows it
 * (persona session or character profile; never a client's claim), in one read. Throws not_found
 * for no such user. */
export type SubjectResolver = (userId: number) => Promise<RoutingSubject & { personaType: string | null }>;

export interface RouteOptions {
  channelId?: string | null | undefined;
  /** Server-known persona type; undefined takes the subject's. Never pass a client's claim. */
  personaType?: string | null | undefined;
  /** The turn comes from the channel itself, for an account linked on the chat platform (the
   * chat-platform adapter's turns): the channel's protocol keeps its whole reach. Otherwise a
   * channel gives its wording only, its reach cut to the caller's own protocol. */
  channelLinked?: boolean | undefined;
}

export interface RoutingOutcome {
  protocolId: string;
  protocol: ProtocolCategory;
  enforced: boolean;
  reason: string;
  decision: RoutingDecision;
  /** The category whose reach the turn has: the caller's own, unless a linked channel's. */
  reach: ProtocolCategory;
  personaType: string | null;
  /** The chosen protocol, base template loaded: what composeSystemPrompt takes. */
  resolved: ResolvedProtocol;
}

export interface ProtocolsServiceOptions {
  subjectOf: SubjectResolver;
  channelProtocol: ChannelProtocolLookup;
  changes: ChangeFeed;
  /** How long a node trusts a cached routing family that no change notice has dropped
   * (RECORD_CACHE_MS). */
  familyCacheMs: number;
}

export class ProtocolsService {
  /** The ground-floor rules, read once: nothing can change them. */
  private groundFloorRules: Promise<string[]> | undefined;
  // Every chat turn routes to a family's latest version, and only an administrator's write (or a
  // start seeding new builtins) changes one: each node keeps the few routing families
  // (noticed-cache.ts; every write below announces a change to them all, since a protocol may be
  // another's base), and concurrent misses share one statement (batched.ts).
  private readonly families: NoticedCache<string, repo.FoundWithBase | undefined>;

  constructor(
    private readonly db: Db,
    private readonly opts: ProtocolsServiceOptions,
  ) {
    const read = batchedByKey(
      (families: string[]) => repo.findLatestOfFamilies(this.db, families),
      (found) => found.row.family,
    );
    this.families = new NoticedCache(read, opts.changes, {
      channel: 'protocols_changed',
      ttlMs: opts.familyCacheMs,
      keyOf: (family) => family,
    });
  }

  private latestOfFamily(family: string) {
    return this.families.get(family);
  }

  /** First start: creates the builtin protocols that do not exist yet; never overwrites. */
  async seed(): Promise<{ inserted: string[] }> {
    // The base first: the routing protocols reference it. Then the ground floor.
    const { inserted } = await this.seedBuiltin(SEED_PROTOCOLS);
    const ground = await this.seedBuiltin(GROUND_FLOOR_PROTOCOLS);
    return { inserted: [...inserted, ...ground.inserted] };
  }

  /** Every ground-floor rule, core identity first: what closes the assistant's own system prompt. */
  groundFloor(): Promise<string[]> {
    this.groundFloorRules ??= repo
      .findMany(
        this.db,
        GROUND_FLOOR_PROTOCOLS.map((p) => p.id),
      )
      .then((rows) =>
        GROUND_FLOOR_PROTOCOLS.flatMap((p) => rows.find((r) => r.id === p.id)?.definition.rules ?? []),
      );
    this.groundFloorRules.catch(() => (this.groundFloorRules = undefined));
    return this.groundFloorRules;
  }

  /** Creates these builtin protocols unless they exist (in order; never overwrites). Other
   * modules' builtin protocols (the workflows module's workflow protocols) come through here. */
  async seedBuiltin(list: readonly (ProtocolDefinition & { id: string })[]): Promise<{ inserted: string[] }> {
    const values = list.map(({ id, ...definition }) => ({
      id,
      ...parseProtocolId(id)!,
      definition,
      builtin: true,
      userId: null,
    }));
    // One statement for the list: a start on a seeded database (every start but the first) is
    // one round trip, not one per protocol, and opens no transaction.
    const inserted = new Set(await repo.insertIfAbsent(this.db, values));
    // A new builtin may be a family's newest version (a start after an upgrade): the nodes already
    // running are told. Should the notice be lost, their cached families lapse within the TTL.
    if (inserted.size > 0) await transaction(this.db, async (uow) => this.families.changedIn(uow, 'every'));
    return { inserted: list.map((p) => p.id).filter((id) => inserted.has(id)) };
  }

  async list(): Promise<ProtocolView[]> {
    return (await repo.list(this.db)).map(toView);
  }

  async get(id: string): Promise<ProtocolView> {
    const row = await repo.findById(this.db, id);
    if (!row) throw notFound('protocol');
    return toView(row);
  }

  async exists(id: string, executor: Executor = this.db): Promise<boolean> {
    return (await repo.findById(executor, id)) !== undefined;
  }

  async create(input: ProtocolDefinition & { id: string }, userId: number): Promise<ProtocolView> {
    const { id, ...definition } = input;
    assertMutable(id);
    const parsed = parseProtocolId(id);
    if (!parsed) throw invalid([{ path: 'id', message: 'not a versioned protocol id' }]);
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      if (await repo.findById(trx, id))
        throw new AppError(
          'conflict',
          `Protocol ${id} already exists; publish a new version (_v${parsed.version + 1}) or update it`,
        );
      const base = definition.kind === 'reference' ? await repo.lockShared(trx, definition.base) : undefined;
      const problems = definitionProblems(id, definition, { base: base ? stored(base) : null });
      if (problems.length > 0) throw invalid(problems);
      try {
        const created = await repo.insert(trx, { id, ...parsed, definition, builtin: false, userId });
        this.families.changedIn(uow, 'every');
        return toView(created);
      } catch (err) {
        // Two creations of one id at once: the loser sees the primary key.
        if (isUniqueViolation(err)) throw new AppError('conflict', `Protocol ${id} already exists`);
        throw err;
      }
    });
  }

  async update(
    id: string,
    input: ProtocolDefinition & { id?: string | undefined },
    userId: number,
  ): Promise<ProtocolView> {
    const { id: bodyId, ...definition } = input;
    assertMutable(id);
    if (bodyId !== undefined && bodyId !== id)
      throw invalid([
        { path: 'id', message: 'the id cannot change; publish a new version with POST instead' },
      ]);
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      if (!(await repo.lock(trx, id))) throw notFound('protocol');
      const base = definition.kind === 'reference' ? await repo.lockShared(trx, definition.base) : undefined;
      const usedAsBaseBy = await repo.usedAsBaseBy(trx, id);
      const problems = definitionProblems(id, definition, { base: base ? stored(base) : null, usedAsBaseBy });
      if (problems.length > 0) throw invalid(problems);
      const updated = await repo.update(trx, id, definition, userId);
      this.families.changedIn(uow, 'every');
      return toView(updated!);
    });
  }

  /** A protocol by id with its base template loaded, ready for composeSystemPrompt (and for
   * mergeProtocols, when it is a workflow protocol). */
  async resolve(id: string, executor: Executor = this.db): Promise<ResolvedProtocol> {
    const found = await repo.findWithBase(executor, id);
    if (!found) throw notFound('protocol');
    return resolvedWithBase(found);
  }

  /** Routing for a user id (reads the user's role, account type and persona type). */
  async routeUser(userId: number, opts: RouteOptions = {}): Promise<RoutingOutcome> {
    const subject = await this.opts.subjectOf(userId);
    return this.route(subject, {
      ...opts,
      personaType: opts.personaType !== undefined ? opts.personaType : subject.personaType,
    });
  }

  /** spec "Routing decision order": the protocol for this subject, and why. */
  private async route(
    subject: RoutingSubject,
    opts: RouteOptions & { personaType: string | null },
  ): Promise<RoutingOutcome> {
    const { personaType } = opts;
    const channelProtocolId = opts.channelId ? await this.opts.channelProtocol(opts.channelId) : null;
    const decision = routeProtocol({
      role: subject.role,
      accountType: subject.accountType,
      personaType,
      channelProtocolId,
    });
    const found = await (decision.source === 'channel'
      ? repo.findWithBase(this.db, decision.protocolId)
      : this.latestOfFamily(ROUTING_FAMILIES[decision.category]));
    // Seeding creates every routing family and nothing deletes protocols; channel protocols are
    // foreign keys. A miss here is a broken installation, not a client error.
    if (!found) throw new Error(`no protocol record for routing decision ${JSON.stringify(decision)}`);
    const outcome: RoutingOutcome = {
      protocolId: found.row.id,
      protocol: categoryOf(found.row.id),
      enforced: decision.enforced,
      reason: `rule ${decision.step}: ${decision.reason}`,
      decision,
      reach: categoryOf(found.row.id),
      personaType,
      resolved: resolvedWithBase(found),
    };
    if (decision.source !== 'channel' || opts.channelLinked) return outcome;
    // A channel named by the client gives its wording; its reach is the caller's own protocol's.
    const own = routeProtocol({
      role: subject.role,
      accountType: subject.accountType,
      personaType,
      channelProtocolId: null,
    });
    const ownFound =
      own.source === 'channel' ? undefined : await this.latestOfFamily(ROUTING_FAMILIES[own.category]);
    if (!ownFound) throw new Error(`no protocol record for routing decision ${JSON.stringify(own)}`);
    const ownResolved = resolvedWithBase(ownFound);
    const further = reachesFurther(outcome.resolved, ownResolved);
    return {
      ...outcome,
      reach: categoryOf(ownFound.row.id),
      resolved: withinReach(outcome.resolved, ownResolved),
      reason: further
        ? `${outcome.reason}; its reach is cut to the caller's own protocol ${ownFound.row.id} (the channel's needs the account linked on the chat platform, speaking there)`
        : outcome.reason,
    };
  }
}
