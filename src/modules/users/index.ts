import type { AppModule } from '../index.js';
import { usersRoutes } from './users.routes.js';
import './users.tables.js';

export { UsersService, toProfile } from './users.service.js';
export const usersModule: AppModule = { name: 'users', routes: usersRoutes };
