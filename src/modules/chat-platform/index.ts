import type { AppPlugin } from '../../platform/http/types.js';
import type { ChatPlatformService } from './chat-platform.service.js';
import { chatPlatformRoutes } from './chat-platform.routes.js';
import './chat-platform.tables.js';

export { ChatPlatformService } from './chat-platform.service.js';

/** The module's HTTP door (mounted by app.ts). */
export const chatPlatformPlugin: AppPlugin<{ chatPlatform: ChatPlatformService }> = async (app, opts) =>
  chatPlatformRoutes(app, opts);
