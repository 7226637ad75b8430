// Every module's doors, in one list: app.ts registers their routes and socket handlers.
import type { Server as SocketServer } from 'socket.io';
import type { App } from '../platform/http/types.js';
import type { Deps } from '../deps.js';
import { authModule } from './auth/index.js';
import { usersModule } from './users/index.js';
import { adminModule } from './admin/index.js';

export interface AppModule {
  name: string;
  routes?: (app: App, deps: Deps) => void;
  sockets?: (io: SocketServer, deps: Deps) => void;
}

export const modules: AppModule[] = [authModule, usersModule, adminModule];
