import type { AppPlugin } from '../../platform/http/types.js';
import type { CharactersService } from './characters.service.js';
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

/** The module's HTTP door (mounted by app.ts). */
export const charactersPlugin: AppPlugin<{ characters: CharactersService }> = async (app, opts) =>
  charactersRoutes(app, opts);
