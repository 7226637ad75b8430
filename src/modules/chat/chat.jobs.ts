// Background vision (spec: one vision call per attached image, in the background): fetch the image
// through the SSRF guard (or read the upload), describe it, store the description as a
// vision_analysis memory of the player linked to the conversation.
import { z } from 'zod';
import type { Logger } from 'pino';
import { AppError } from '../../platform/http/problem.js';
import { safeFetch, SafeFetchError } from '../../platform/http/safe-fetch.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import type { FilesService } from '../files/index.js';
import type { MemoryService } from '../memory/index.js';

export const VISION_JOB = 'chat.vision';

export const visionJobSchema = z.object({
  userId: z.number().int(),
  conversationId: z.number().int(),
  messageId: z.number().int(),
  image: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('url'), url: z.string() }),
    z.object({ kind: z.literal('inline'), data: z.string() }),
    z.object({
      kind: z.literal('upload'),
      uploadContextId: z.string(),
      fileId: z.number().int().or(z.string()),
    }),
  ]),
});
export type VisionJob = z.infer<typeof visionJobSchema>;

const IMAGE_SIGNATURES: [string, (b: Buffer) => boolean][] = [
  [
    'image/png',
    (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  ],
  ['image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => b.subarray(0, 4).toString('latin1') === 'GIF8'],
  [
    'image/webp',
    (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  ],
];

export function sniffImage(b: Buffer): string | null {
  return IMAGE_SIGNATURES.find(([, test]) => test(b))?.[0] ?? null;
}

export function defineChatJobs(
  jobs: JobQueue,
  d: {
    models: ModelGateway;
    memory: MemoryService;
    files: FilesService;
    log: Logger;
    attachmentBytes: number;
    attachmentTimeoutMs: number;
  },
) {
  jobs.define({
    name: VISION_JOB,
    schema: visionJobSchema,
    retryLimit: 3,
    handler: async (job, { log }) => {
      let data: Buffer;
      let mediaType: string | null;
      let visionContext: string;
      const img = job.image;
      if (img.kind === 'url') {
        try {
          const fetched = await safeFetch(img.url, {
            maxBytes: d.attachmentBytes,
            timeoutMs: d.attachmentTimeoutMs,
          });
          data = fetched.data;
          mediaType = fetched.mimeType;
        } catch (err) {
          // A refused or unusable URL will not get better with retries: record it and stop.
          if (err instanceof SafeFetchError) {
            log.warn({ url: img.url, reason: err.reason }, 'attachment refused');
            return;
          }
          throw err;
        }
        visionContext = img.url;
      } else if (img.kind === 'inline') {
        data = Buffer.from(img.data, 'base64');
        mediaType = sniffImage(data);
        visionContext = 'inline image';
      } else {
        // Deleted by its owner or expired meanwhile: nothing to describe, and retries won't help.
        const files = await d.files.readContext(job.userId, img.uploadContextId).catch((err: unknown) => {
          if (err instanceof AppError && err.code === 'not_found') return [];
          throw err;
        });
        const file = files.find((f) => String(f.id) === String(img.fileId));
        if (!file) {
          log.warn({ uploadContextId: img.uploadContextId }, 'uploaded image is gone');
          return;
        }
        data = file.data;
        mediaType = file.mimeType;
        visionContext = file.name;
      }
      if (!mediaType || !sniffImage(data)) {
        log.warn({ visionContext }, 'attachment is not an image a vision model takes');
        return;
      }
      const described = await d.models.describeImage({
        purpose: 'chat.vision',
        image: { data: new Uint8Array(data), mediaType },
        prompt:
          'Describe this image for the conversation it was shared in: what it shows, any text in it, and anything notable.',
      });
      await d.memory.addMemory({
        userId: job.userId,
        source: 'vision_analysis',
        content: described.text,
        conversationId: job.conversationId,
        metadata: {
          conversationId: job.conversationId,
          visionContext,
          ...(img.kind === 'upload' ? { uploadContextId: img.uploadContextId } : {}),
          messageId: job.messageId,
        },
      });
    },
  });
}
