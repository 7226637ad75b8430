// Uploads: files sniffed by their bytes, stored in the database under an upload context that
// belongs to the uploader; the chat turn reads a context's files for its owner only. Each user has
// a request rate, a quota of stored bytes, and contexts expire after the retention period (the
// hourly maintenance sweep); an owner may delete a context sooner.
import { randomUUID } from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import { transaction, type Db } from '../../platform/db/database.js';
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import { enforceLimit, type CounterStore } from '../../platform/http/rate-limit.js';
import * as repo from './files.repository.js';
import { acceptedType, safeFileName } from './files.rules.js';
import type { UploadResult } from './files.schemas.js';
import { oneAtATime, quotaExceeded, UploadSpool } from './files.spool.js';

export interface IncomingFile {
  /** The name the client gave (sanitised before storing). */
  name: string | undefined;
  data: Buffer;
}

export interface StoredFile {
  id: number;
  name: string;
  mimeType: string;
  size: number;
  data: Buffer;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface UploadLimits {
  fileBytes: number;
  files: number;
  perMinute: number;
  quotaBytes: number;
  retentionDays: number;
}

export class FilesService {
  constructor(
    private readonly db: Db,
    private readonly counters: CounterStore,
    private readonly limits: UploadLimits,
  ) {}

  /** Counts an upload request against the user's per-minute limit (429 past it). Called before
   * the body is read, so a refused request costs no parsing. */
  admit(userId: number): Promise<void> {
    return enforceLimit(this.counters, `upload:${userId}`, this.limits.perMinute, 60_000, 'uploads a minute');
  }

  /** Begins reading an upload's body for the user: its files spooled to disk, within their room
   * (files.spool.ts). */
  async openUpload(userId: number): Promise<UploadSpool> {
    return UploadSpool.open(userId, await repo.storedBytes(this.db, userId), this.limits.quotaBytes);
  }

  /** Stores a spooled upload (one at a time in this process) and removes its files. */
  async uploadSpooled(userId: number, spool: UploadSpool): Promise<UploadResult> {
    try {
      return await oneAtATime(async () => this.upload(userId, await spool.read()));
    } finally {
      await spool.close();
    }
  }

  /** Sniffs each file's type (415 when not accepted) and stores them all, or none (413 when they
   * would take the user's stored bytes past the quota). */
  async upload(userId: number, files: readonly IncomingFile[]): Promise<UploadResult> {
    if (files.length === 0) throw validationFailed([{ path: 'file', message: 'send at least one file' }]);
    if (files.length > this.limits.files)
      throw new AppError('payload_too_large', `At most ${this.limits.files} files per upload`, {
        maxFiles: this.limits.files,
      });
    const checked: { name: string; mimeType: string; data: Buffer }[] = [];
    for (const [i, f] of files.entries()) {
      const name = safeFileName(f.name);
      if (f.data.length > this.limits.fileBytes)
        throw new AppError('payload_too_large', `${name} is larger than ${this.limits.fileBytes} bytes`, {
          limit: this.limits.fileBytes,
        });
      if (f.data.length === 0) throw validationFailed([{ path: `files.${i}`, message: `${name} is empty` }]);
      const mimeType = acceptedType((await fileTypeFromBuffer(f.data))?.mime, f.data);
      if (!mimeType)
        throw new AppError(
          'unsupported_media_type',
          `${name}: only images (PNG, JPEG, GIF, WebP), PDF, DOCX and plain text are accepted`,
          {
            file: name,
          },
        );
      checked.push({ name, mimeType, data: f.data });
    }
    const uploadContextId = randomUUID();
    const bytes = checked.reduce((sum, f) => sum + f.data.length, 0);
    return transaction(this.db, async ({ trx }) => {
      // Under the user's lock, so two concurrent uploads cannot both fit in the last free bytes.
      await repo.lockUserUploads(trx, userId);
      const used = await repo.storedBytes(trx, userId);
      if (used + bytes > this.limits.quotaBytes) throw quotaExceeded(this.limits.quotaBytes, used, bytes);
      await repo.insertContext(trx, uploadContextId, userId);
      const stored = [];
      for (const [position, f] of checked.entries()) {
        const row = await repo.insertFile(trx, { contextId: uploadContextId, position, ...f });
        stored.push({ id: row.id, name: row.name, mimeType: row.mime_type, size: row.size });
      }
      return { uploadContextId, files: stored };
    });
  }

  /** The files of an upload context, in upload order, for its owner only; anyone else (and an
   * unknown id) gets 404, so a context id reveals nothing to another user. */
  async readContext(userId: number, uploadContextId: string): Promise<StoredFile[]> {
    if (!UUID.test(uploadContextId)) throw notFound('upload context');
    const rows = await repo.filesOfContext(this.db, uploadContextId, userId);
    if (rows.length === 0) throw notFound('upload context');
    return rows.map((r) => ({ id: r.id, name: r.name, mimeType: r.mime_type, size: r.size, data: r.data }));
  }

  /** Deletes the caller's own upload context and its files; 404 for anyone else's or an unknown id. */
  async deleteContext(userId: number, uploadContextId: string): Promise<void> {
    if (!UUID.test(uploadContextId) || !(await repo.deleteContext(this.db, uploadContextId, userId)))
      throw notFound('upload context');
  }

  /** Deletes the contexts past the retention period (the maintenance sweep). */
  sweep(): Promise<number> {
    return repo.deleteContextsOlderThan(this.db, this.limits.retentionDays);
  }
}
