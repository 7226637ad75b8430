import type { AppPlugin } from '../../platform/http/types.js';
import type { InventoryService } from './inventory.service.js';
import { inventoryRoutes } from './inventory.routes.js';
import './inventory.tables.js';

export { InventoryService, type EconomyStateAt } from './inventory.service.js';
export type { ChangeContext, CurrencyChange, ItemChange, DirectorChange } from './inventory.director.js';
export {
  inventorySchema,
  itemSchema,
  directorModifyCurrencyArgs,
  directorModifyInventoryArgs,
  type InventoryView,
  type Item,
} from './inventory.schemas.js';
export { inventorySummary, MAX_BALANCE, MAX_CHANGE, MAX_HELD } from './inventory.rules.js';
export {
  inventorySockets,
  inventoryEventDocs,
  inventoryUpdateEvent,
  type InventoryUpdate,
} from './inventory.updates.js';

/** The module's HTTP door (mounted by app.ts). */
export const inventoryPlugin: AppPlugin<{ inventory: InventoryService }> = async (app, opts) =>
  inventoryRoutes(app, opts);
