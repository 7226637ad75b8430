import type { AppModule } from '../index.js';
import { chatPlatformRoutes } from './chat-platform.routes.js';
import './chat-platform.tables.js';

export { ChatPlatformService } from './chat-platform.service.js';
export const chatPlatformModule: AppModule = { name: 'chat-platform', routes: chatPlatformRoutes };
