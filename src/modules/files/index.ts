import type { Config } from '../../config.js';
import type { Db } from '../../platform/db/database.js';
import type { CounterStore } from '../../platform/http/rate-limit.js';
import type { AppPlugin } from '../../platform/http/types.js';
import { FilesService } from './files.service.js';
import { filesRoutes, type FilesRoutesOptions } from './files.routes.js';
import './files.tables.js';

export { FilesService, type StoredFile } from './files.service.js';
// The upload rules and multipart problems, for other modules that take files (training).
export { looksLikeText, safeFileName } from './files.rules.js';
export { uploadError as multipartProblem } from './files.routes.js';

/** The module's HTTP door (mounted by app.ts): uploads, with the multipart parser in its scope. */
export const filesPlugin: AppPlugin<FilesRoutesOptions> = async (app, opts) => filesRoutes(app, opts);
export type { FilesRoutesOptions as FilesPluginOptions };

/** Builds the uploads service with the configured limits (counted in the shared counters). */
export function createFilesModule(
  db: Db,
  counters: CounterStore,
  config: Pick<Config, 'limits'>,
): FilesService {
  return new FilesService(db, counters, {
    fileBytes: config.limits.uploadBytes,
    files: config.limits.uploadFiles,
    perMinute: config.limits.uploadsPerMinute,
    quotaBytes: config.limits.uploadQuotaBytes,
    retentionDays: config.limits.uploadRetentionDays,
  });
}
