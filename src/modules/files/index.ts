import type { AppModule } from '../index.js';
import { filesRoutes } from './files.routes.js';
import './files.tables.js';

export { FilesService, type StoredFile } from './files.service.js';
export const filesModule: AppModule = { name: 'files', routes: filesRoutes };
