import type { AppModule } from '../index.js';
import { conversationRoutes } from './conversations.routes.js';
import { chatSockets } from './chat.socket.js';
import { toolRoutes } from './tools.routes.js';
import './chat.tables.js';

export { ConversationsService } from './conversations.service.js';
export { ChatService } from './chat.service.js';
export { defineChatJobs } from './chat.jobs.js';
export const chatModule: AppModule = {
  name: 'chat',
  routes: (app, deps) => {
    conversationRoutes(app, deps);
    toolRoutes(app, deps);
  },
  sockets: chatSockets,
};
