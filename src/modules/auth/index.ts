import './auth.tables.js';
import './oauth.tables.js';

export { AuthService } from './auth.service.js';
export { AccountEmailService, enqueueVerification } from './account-email.service.js';
export { OAuthService } from './oauth.service.js';
export { authPlugin, type AuthPluginOptions } from './auth.plugin.js';
