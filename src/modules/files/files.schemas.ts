import { z } from 'zod';

export const uploadedFileSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  mimeType: z.string(),
  size: z.number().int(),
});

export const uploadResponse = z
  .object({
    uploadContextId: z.uuid(),
    files: z.array(uploadedFileSchema),
  })
  .meta({ id: 'Upload' });
export type UploadResult = z.infer<typeof uploadResponse>;

/** Any string: a malformed id answers 404 like an unknown one (it names nothing the caller owns). */
export const uploadContextParams = z.object({ uploadContextId: z.string().max(64) });
