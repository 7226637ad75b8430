import type { AppPlugin } from '../../platform/http/types.js';
import { accountRoutes } from './account.routes.js';
import type { AccountService } from './account.service.js';

export { AccountService } from './account.service.js';

/** The module's HTTP door (mounted by app.ts): an account's export and erasure. */
export const accountPlugin: AppPlugin<{ account: AccountService }> = async (app, opts) =>
  accountRoutes(app, opts);
