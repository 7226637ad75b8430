import type { Db } from '../../platform/db/database.js';
import type { ChangeFeed } from '../../platform/db/notifications.js';
import type { AppPlugin } from '../../platform/http/types.js';
import type { UsersService } from '../users/index.js';
import { CharactersService } from './characters.service.js';
import { charactersRoutes } from './characters.routes.js';
import './characters.tables.js';

export { CharactersService } from './characters.service.js';
export {
  characterStateSchema,
  emotionsSchema,
  playerQuestSchema,
  relationshipSchema,
} from './characters.schemas.js';
export type { CharacterState, Npc, PlayerQuest, Relationship } from './characters.schemas.js';
export { npcToolsSchema, type NpcTools } from './characters.tools.js';

/** The characters, their profiles cached per node for `profileCacheMs` (RECORD_CACHE_MS): a
 * character's own writes announce it, and a change to its user heard from the accounts (a
 * deletion by any path) drops it. */
export function createCharactersService(
  p: { db: Db; users: UsersService; changes: ChangeFeed; accounts: AccountChanges },
  profileCacheMs: number,
): CharactersService {
  const characters = new CharactersService(p.db, p.users, { changes: p.changes, profileCacheMs });
  p.accounts.onChange((id) => characters.userChanged(id));
  return characters;
}

interface AccountChanges {
  onChange(listener: (id: number) => void): unknown;
}

/** The module's HTTP door (mounted by app.ts). */
export const charactersPlugin: AppPlugin<{ characters: CharactersService }> = async (app, opts) =>
  charactersRoutes(app, opts);
