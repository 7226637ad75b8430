// Every module's doors, in one list: app.ts registers their routes and socket handlers.
import type { Server as SocketServer } from 'socket.io';
import type { App } from '../platform/http/types.js';
import type { Deps } from '../deps.js';
import { authModule } from './auth/index.js';
import { usersModule } from './users/index.js';
import { adminModule } from './admin/index.js';
import { chatModule } from './chat/index.js';
import { observerModule } from './observer/index.js';
import { charactersModule } from './characters/index.js';
import { inventoryModule } from './inventory/index.js';
import { syncModule } from './sync/index.js';
import { protocolsModule } from './protocols/index.js';
import { chatPlatformModule } from './chat-platform/index.js';
import { filesModule } from './files/index.js';
import { memoryModule } from './memory/index.js';

export interface AppModule {
  name: string;
  routes?: (app: App, deps: Deps) => void;
  sockets?: (io: SocketServer, deps: Deps) => void;
}

export const modules: AppModule[] = [
  authModule,
  usersModule,
  adminModule,
  chatModule,
  observerModule,
  charactersModule,
  inventoryModule,
  syncModule,
  protocolsModule,
  chatPlatformModule,
  filesModule,
  memoryModule,
];
