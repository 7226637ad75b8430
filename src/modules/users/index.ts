import type { AppPlugin } from '../../platform/http/types.js';
import type { UsersService } from './users.service.js';
import { usersRoutes } from './users.routes.js';
import './users.tables.js';

export {
  UsersService,
  toProfile,
  MIN_PASSWORD,
  MAX_PASSWORD,
  type UserRow,
  type CreateUserInput,
} from './users.service.js';
export { accountTypeSchema, profileSchema, roleSchema, userIdParam, type Profile } from './users.schemas.js';

/** The module's HTTP door (mounted by app.ts). */
export const usersPlugin: AppPlugin<{ users: UsersService }> = async (app, opts) => usersRoutes(app, opts);
