import type { AppModule } from '../index.js';
import { apiKeyRoutes } from './api-keys.routes.js';
import { authRoutes } from './auth.routes.js';
import { accountEmailRoutes } from './account-email.routes.js';
import { oauthRoutes } from './oauth.routes.js';
import './auth.tables.js';
import './oauth.tables.js';

export { AuthService } from './auth.service.js';
export const authModule: AppModule = {
  name: 'auth',
  routes: (app, deps) => {
    authRoutes(app, deps);
    apiKeyRoutes(app, deps);
    accountEmailRoutes(app, deps);
    oauthRoutes(app, deps);
  },
};
