import type { AppPlugin } from '../../platform/http/types.js';
import type { PlayersService } from '../auth/index.js';
import type { SyncService } from './sync.service.js';
import { syncRoutes } from './sync.routes.js';
import { playerRoutes } from './sync.players.routes.js';

export { SyncService, type MemoryReader } from './sync.service.js';

/** The module's HTTP door (mounted by app.ts): the world platform's sync and a game server's
 * players. */
export const syncPlugin: AppPlugin<{
  sync: SyncService;
  players: PlayersService;
  playersPerMinute: number;
}> = async (app, opts) => {
  syncRoutes(app, opts);
  playerRoutes(app, opts);
};
