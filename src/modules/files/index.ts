import type { AppPlugin } from '../../platform/http/types.js';
import { filesRoutes, type FilesRoutesOptions } from './files.routes.js';
import './files.tables.js';

export { FilesService, type StoredFile } from './files.service.js';
// The upload rules and multipart problems, for other modules that take files (training).
export { looksLikeText, safeFileName } from './files.rules.js';
export { uploadError as multipartProblem } from './files.routes.js';

/** The module's HTTP door (mounted by app.ts): uploads, with the multipart parser in its scope. */
export const filesPlugin: AppPlugin<FilesRoutesOptions> = async (app, opts) => filesRoutes(app, opts);
export type { FilesRoutesOptions as FilesPluginOptions };
