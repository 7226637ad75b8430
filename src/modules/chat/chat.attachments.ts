// A message's attachments, checked before anything is stored: attachment URLs vetted by the SSRF
// guard (first hop; the vision job fetches them later through the guarded fetcher), inline
// base64 images decoded and sized, and the files of the caller's own upload context: its images
// for the vision job, its documents read (chat.documents.ts).
import { AppError } from '../../platform/http/problem.js';
import { vetUrl, SafeFetchError } from '../../platform/http/safe-fetch.js';
import { ChatDocuments } from './chat.documents.js';
import type { AttachedDocument } from './chat.documents.rules.js';
import { decodeBase64Image } from './chat.rules.js';
import { MAX_IMAGE_BYTES, type ChatMessageInput } from './chat.schemas.js';
import type { Attachment, ChatServiceDeps } from './chat.types.js';

export class ChatAttachments {
  private readonly files: ChatServiceDeps['files'];
  readonly documents: ChatDocuments;

  constructor(
    d: Pick<ChatServiceDeps, 'files' | 'extractor' | 'memory'>,
    private readonly timeoutMs: number,
  ) {
    this.files = d.files;
    this.documents = new ChatDocuments(d.extractor, d.memory, timeoutMs);
  }

  /** Checks every attachment before anything is stored; the fetch and the vision call run later.
   * The documents are read now, so one that cannot be read refuses the message. */
  async attachments(
    userId: number,
    input: ChatMessageInput,
  ): Promise<{ images: Attachment[]; documents: AttachedDocument[] }> {
    const out: Attachment[] = [];
    for (const [i, url] of (input.attachmentUrls ?? []).entries()) {
      try {
        await vetUrl(url, { timeoutMs: this.timeoutMs });
      } catch (err) {
        if (err instanceof SafeFetchError)
          throw new AppError('validation_failed', err.message, {
            errors: [{ path: `chatMessage.attachmentUrls.${i}`, message: err.message }],
          });
        throw err;
      }
      out.push({ job: { kind: 'url', url } });
    }
    for (const [i, b64] of (input.imageBase64Array ?? []).entries()) {
      const bytes = decodeBase64Image(b64);
      const path = `chatMessage.imageBase64Array.${i}`;
      if (!bytes)
        throw new AppError('validation_failed', 'Not a base64 image', {
          errors: [{ path, message: 'not base64' }],
        });
      if (bytes.byteLength > MAX_IMAGE_BYTES)
        throw new AppError('payload_too_large', `An image may be at most ${MAX_IMAGE_BYTES} bytes`);
      out.push({ job: { kind: 'inline', data: bytes.toString('base64') } });
    }
    if (!input.uploadContextId) return { images: out, documents: [] };
    const files = await this.files.readContext(userId, input.uploadContextId);
    for (const f of files)
      if (f.mimeType.startsWith('image/'))
        out.push({ job: { kind: 'upload', uploadContextId: input.uploadContextId, fileId: f.id } });
    const documents = files.filter((f) => !f.mimeType.startsWith('image/'));
    return {
      images: out,
      documents: await this.documents.read(input.uploadContextId, documents, input.message),
    };
  }
}
