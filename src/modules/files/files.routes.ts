import multipart from '@fastify/multipart';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { currentUser } from '../../platform/http/auth.js';
import { AppError, unsafeTextErrors, validationFailed } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { noContent, problems } from '../../platform/http/types.js';
import type { FilesService } from './files.service.js';
import { uploadContextParams, uploadResponse } from './files.schemas.js';

/** An error while reading the parts → the contract's problems: @fastify/multipart's limits, and
 * a body the multipart parser cannot read (no boundary, a body without the declared boundary, a
 * boundary over 256 characters, a body cut off in a part) as 400. Our own problems pass through;
 * otherwise the loop only reads the request, so an error without a server status (5xx) is the
 * body's fault. */
export function uploadError(err: unknown, limits: { fileBytes: number; files: number }): unknown {
  if (err instanceof AppError) return err;
  const code = (err as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE')
    return new AppError('payload_too_large', `Each file may be at most ${limits.fileBytes} bytes`, {
      limit: limits.fileBytes,
    });
  if (code === 'FST_FILES_LIMIT')
    return new AppError('payload_too_large', `At most ${limits.files} files per upload`, {
      maxFiles: limits.files,
    });
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return new AppError('payload_too_large', 'Too many form fields');
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE')
    return new AppError('unsupported_media_type', 'Send the files as multipart/form-data');
  const status = (err as { statusCode?: unknown }).statusCode;
  if (err instanceof Error && !(typeof status === 'number' && status >= 500))
    return validationFailed(
      [{ path: 'body', message: `malformed multipart/form-data: ${err.message}` }],
      'The multipart body cannot be read',
    );
  return err;
}

export interface FilesRoutesOptions {
  files: FilesService;
  /** Upload limits: bytes per file and files per upload. */
  limits: { fileBytes: number; files: number };
}

export function filesRoutes(app: App, { files, limits }: FilesRoutesOptions) {
  const tags = ['files'];

  // Multipart parsing is registered in this scope only: no other route accepts multipart bodies.
  void app.register(async (parent) => {
    const scope = parent.withTypeProvider<ZodTypeProvider>();
    await scope.register(multipart, {
      limits: {
        fileSize: limits.fileBytes,
        files: limits.files,
        fields: 20,
        fieldSize: 64 * 1024,
        parts: limits.files + 20,
        headerPairs: 100,
      },
      throwFileSizeLimit: true,
    });

    scope.post(
      '/api/files/upload',
      {
        schema: {
          tags,
          summary:
            'Upload one or more files (multipart/form-data); the upload context id attaches them to a chat message',
          description:
            'multipart/form-data with one or more file parts (any field name; other fields are ignored). Each file may be at most ' +
            'UPLOAD_LIMIT bytes (413), UPLOAD_MAX_FILES files per request; the type is sniffed from the bytes: PNG, JPEG, GIF, WebP, PDF, DOCX and UTF-8 text are accepted (415 otherwise). ' +
            'Each user may send UPLOAD_RATE_LIMIT uploads a minute (429) and keep UPLOAD_QUOTA_BYTES of uploads stored (413, extensions quota and used); an upload context is deleted after UPLOAD_RETENTION_DAYS days.',
          consumes: ['multipart/form-data'],
          response: { 201: uploadResponse, ...problems(400, 401, 413, 415, 429) },
        },
      },
      async (req, reply) => {
        const user = currentUser(req);
        await files.admit(user.id);
        // Read as it arrives, to disk, within the user's quota (files.spool.ts).
        const spool = await files.openUpload(user.id);
        try {
          for await (const part of req.parts()) {
            // Text fields are ignored, yet held to the rule of every request: no U+0000, no
            // unpaired surrogate, in a field's name or its value (a file's name is sanitised).
            const unsafe = unsafeTextErrors(
              { [part.fieldname]: part.type === 'field' ? part.value : '' },
              'body',
            );
            if (unsafe) throw validationFailed(unsafe);
            if (part.type !== 'file') continue;
            await spool.add(part.filename, part.file);
          }
        } catch (err) {
          await spool.close();
          throw uploadError(err, limits);
        }
        return reply.status(201).send(await files.uploadSpooled(user.id, spool));
      },
    );

    scope.delete(
      '/api/files/upload/:uploadContextId',
      {
        schema: {
          tags,
          summary: 'Delete one of the caller’s upload contexts and its files (frees quota)',
          description:
            "Deletes one of the caller's upload contexts with its files, freeing their quota; anyone else's is 404.",
          params: uploadContextParams,
          response: { 204: noContent, ...problems(400, 401, 404) },
        },
      },
      async (req, reply) => {
        await files.deleteContext(currentUser(req).id, req.params.uploadContextId);
        return reply.status(204).send(null);
      },
    );

    // The spec lists GET for this path; uploading needs POST (the API contract: GET answers 405).
    scope.get(
      '/api/files/upload',
      {
        schema: {
          tags,
          summary: 'Not allowed: upload with POST',
          description: 'Always 405: files are uploaded with POST (multipart/form-data).',
          response: problems(401, 405),
        },
      },
      async () => {
        throw new AppError(
          'method_not_allowed',
          'Upload files with POST (multipart/form-data)',
          {},
          { allow: 'POST' },
        );
      },
    );
  });
}
