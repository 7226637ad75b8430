import type { AppModule } from '../index.js';
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
export const charactersModule: AppModule = { name: 'characters', routes: charactersRoutes };
