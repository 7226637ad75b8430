import type { AppModule } from '../index.js';
import { conversationRoutes } from './conversations.routes.js';
import './chat.tables.js';

export { ConversationsService } from './conversations.service.js';
export const chatModule: AppModule = {
  name: 'chat',
  routes: (app, deps) => {
    conversationRoutes(app, deps);
  },
};
