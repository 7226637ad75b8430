// Players from a game server (contract: "Doors for games"): the game knows its players by its own
// id (a Steam id, a console account, its own login); the service keeps one password-less account
// (carbon/public) per such id, linked as the external identity of provider `game`, and signs it in
// for the game server, which hands the tokens to its client.
import { transaction, type Db } from '../../platform/db/database.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { notFound } from '../../platform/http/problem.js';
import type { ClientType } from '../../platform/security/identity.rules.js';
import { toProfile, type UserRow, type UsersService } from '../users/index.js';
import type { AuthService } from './auth.service.js';
import type { TokenResponse } from './auth.schemas.js';
import * as repo from './oauth.repository.js';

/** The identity provider a game server's players are linked under (OAuth provider names are
 * lower-case words, so none can be this). */
export const GAME_PROVIDER = 'game:server';

export class PlayersService {
  constructor(
    private readonly db: Db,
    private readonly users: UsersService,
    private readonly auth: AuthService,
  ) {}

  /** Finds or creates the player the game knows by `externalId` and starts a session of
   * `clientType` for it. A `name` renames a player found under another name. */
  async signIn(
    input: { externalId: string; name?: string | undefined },
    clientType: ClientType,
  ): Promise<TokenResponse & { created: boolean }> {
    const found = await this.findOrCreate(input).catch(async (err: unknown) => {
      // Two first sign-ins of one player at once: the loser hit the identity the winner stored.
      if (!isUniqueViolation(err)) throw err;
      return this.findOrCreate(input);
    });
    const name = input.name?.trim();
    if (!found.created && name && found.user.name !== name) {
      await this.users.rename(found.user.id, name);
      found.user = { ...found.user, name };
    }
    return { ...(await this.auth.issue(found.user, clientType)), created: found.created };
  }

  /** The player's profile, or 404 when the game never signed this id in. */
  async get(externalId: string) {
    const linked = await repo.findIdentity(this.db, GAME_PROVIDER, externalId);
    if (!linked) throw notFound('player');
    return toProfile(await this.users.get(linked.user_id));
  }

  private findOrCreate(input: {
    externalId: string;
    name?: string | undefined;
  }): Promise<{ user: UserRow; created: boolean }> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      const linked = await repo.findIdentity(trx, GAME_PROVIDER, input.externalId);
      if (linked) {
        await repo.touchIdentity(trx, linked.id, null);
        return { user: await this.users.get(linked.user_id, trx), created: false };
      }
      const user = await this.users.create(
        { email: null, password: null, name: input.name ?? `player ${input.externalId}`.slice(0, 100) },
        uow,
      );
      await repo.insertIdentity(trx, {
        userId: user.id,
        provider: GAME_PROVIDER,
        subject: input.externalId,
        email: null,
      });
      return { user, created: true };
    });
  }
}
