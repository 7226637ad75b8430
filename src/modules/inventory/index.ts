import type { AppModule } from '../index.js';
import { inventoryRoutes } from './inventory.routes.js';
import './inventory.tables.js';

export {
  InventoryService,
  type ChangeContext,
  type CurrencyChange,
  type ItemChange,
  type DirectorChange,
} from './inventory.service.js';
export {
  inventorySchema,
  itemSchema,
  directorModifyCurrencyArgs,
  directorModifyInventoryArgs,
  type InventoryView,
  type Item,
} from './inventory.schemas.js';
export { inventorySummary } from './inventory.rules.js';
export const inventoryModule: AppModule = { name: 'inventory', routes: inventoryRoutes };
