// The auth module's HTTP door: sign-up and sign-in, API keys, account mail and external login.
import type { AppPlugin } from '../../platform/http/types.js';
import type { AccountEmailService } from './account-email.service.js';
import { accountEmailRoutes } from './account-email.routes.js';
import { apiKeyRoutes } from './api-keys.routes.js';
import { authRoutes } from './auth.routes.js';
import type { AuthService } from './auth.service.js';
import type { OAuthService } from './oauth.service.js';
import { oauthRoutes } from './oauth.routes.js';

export interface AuthPluginOptions {
  auth: AuthService;
  accountEmail: AccountEmailService;
  oauth: OAuthService;
  /** Requests per minute per IP on all /api/auth/* routes together. */
  authPerMinute: number;
  /** The header a trusted proxy sets with the caller's country (external login's blocked countries). */
  countryHeader: string | undefined;
  /** The service's public base URL (https makes the external-login cookie Secure). */
  publicUrl: string;
}

export const authPlugin: AppPlugin<AuthPluginOptions> = async (app, opts) => {
  authRoutes(app, opts);
  apiKeyRoutes(app, opts);
  accountEmailRoutes(app, opts);
  oauthRoutes(app, opts);
};
