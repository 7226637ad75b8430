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
  .meta({
    id: 'Upload',
    examples: [
      {
        uploadContextId: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
        files: [{ id: 88, name: 'map.png', mimeType: 'image/png', size: 48213 }],
      },
    ],
  });
export type UploadResult = z.infer<typeof uploadResponse>;

/** Any string: a malformed id answers 404 like an unknown one (it names nothing the caller owns). */
export const uploadContextParams = z.object({
  uploadContextId: z
    .string()
    .max(64)
    .meta({ examples: ['c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f'] }),
});
