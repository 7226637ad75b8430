// Documents attached to a chat message: the PDF, DOCX and text files of its `uploadContextId`.
// Each is read by the training module's extractor (worker threads, through the DocumentExtractor
// port) within the attachment timeout, before anything is stored: a file that cannot be read, holds
// no text or is of a type no reader takes refuses the message with a problem naming it, as an
// unusable image does. The passages that bear most on the message go to the prompt
// (chat.documents.rules.ts); the text is stored as `document_ingestion` memories of the player in
// the transaction that stores the message, so a retried message never stores it twice.
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import { AppError, validationFailed } from '../../platform/http/problem.js';
import type { StoredFile } from '../files/index.js';
import type { MemoryService } from '../memory/index.js';
import {
  DOCUMENT_CONTEXT_CHARS,
  DOCUMENT_MAX_CHARS,
  documentParts,
  excerpt,
  storableText,
  type AttachedDocument,
} from './chat.documents.rules.js';
import type { DocumentExtractor } from './chat.types.js';

/** The upload types (files.rules.ts) a reader takes, and which. */
const READERS: Readonly<Record<string, 'pdf' | 'docx' | 'text'>> = {
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/plain': 'text',
};

const PATH = 'chatMessage.uploadContextId';

/** A file the reader could not read: the message's 400. */
class Unreadable extends Error {}

export class ChatDocuments {
  constructor(
    private readonly extractor: DocumentExtractor,
    private readonly memory: Pick<MemoryService, 'addMemories'>,
    private readonly timeoutMs: number,
  ) {}

  /** Reads the documents (all at once), each bounded by the timeout, and picks what the prompt
   * carries of each: an equal share of DOCUMENT_CONTEXT_CHARS. 415 for a type no reader takes;
   * 400 naming every file that cannot be read or holds no text. */
  async read(uploadContextId: string, files: StoredFile[], message: string): Promise<AttachedDocument[]> {
    if (files.length === 0) return [];
    const other = files.find((f) => !READERS[f.mimeType]);
    if (other)
      throw new AppError(
        'unsupported_media_type',
        `${other.name} (${other.mimeType}) cannot be read as a document: only PDF, DOCX and plain text are`,
        { file: other.name },
      );
    const settled = await Promise.allSettled(files.map((f) => this.text(f)));
    const unreadable = settled.flatMap((s, i) =>
      s.status === 'rejected' ? [{ path: PATH, message: `${files[i]!.name}: ${errorText(s.reason)}` }] : [],
    );
    const failure = settled.find(
      (s): s is PromiseRejectedResult => s.status === 'rejected' && !(s.reason instanceof Unreadable),
    );
    if (failure) throw failure.reason;
    if (unreadable.length > 0) throw validationFailed(unreadable);
    const budget = Math.floor(DOCUMENT_CONTEXT_CHARS / files.length);
    return files.map((f, i) => {
      const { text, truncated } = (settled[i] as PromiseFulfilledResult<{ text: string; truncated: boolean }>)
        .value;
      return {
        uploadContextId,
        fileId: f.id,
        name: f.name,
        mimeType: f.mimeType,
        text,
        truncated,
        excerpt: excerpt(text, message, budget),
      };
    });
  }

  /** One file's text. The timeout runs here too: a file waiting for a busy worker counts it. The
   * extractor's own (the same) ends a worker that runs too long. */
  private async text(f: StoredFile): Promise<{ text: string; truncated: boolean }> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Unreadable(`it could not be read within ${this.timeoutMs / 1000} s`)),
        this.timeoutMs,
      );
    });
    try {
      const read = await Promise.race([
        this.extractor.run(
          { op: 'extract', type: READERS[f.mimeType]!, data: f.data, maxChars: DOCUMENT_MAX_CHARS },
          this.timeoutMs,
        ),
        late,
      ]);
      const text = storableText(read.text ?? '').trim();
      if (!text) throw new Unreadable('it holds no text');
      return { text, truncated: read.truncated };
    } catch (err) {
      if (err instanceof Error && err.name === 'ExtractionError')
        throw new Unreadable(`it cannot be read as ${READERS[f.mimeType]!.toUpperCase()} (${err.message})`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The documents as `document_ingestion` memories of the player (spec: MemoryMetadata
   * `fileContext`, the file's name), in the transaction that stores the message. */
  async store(
    uow: UnitOfWork,
    documents: AttachedDocument[],
    link: { userId: number; conversationId: number; messageId: number },
  ): Promise<void> {
    if (documents.length === 0) return;
    await this.memory.addMemories(
      documents.flatMap((d) =>
        documentParts(d).map((p) => ({
          userId: link.userId,
          source: 'document_ingestion' as const,
          content: p.content,
          conversationId: link.conversationId,
          metadata: {
            conversationId: link.conversationId,
            fileContext: d.name,
            uploadContextId: d.uploadContextId,
            fileId: d.fileId,
            mimeType: d.mimeType,
            messageId: link.messageId,
            part: p.part,
            parts: p.parts,
            ...(d.truncated ? { truncated: true } : {}),
          },
        })),
      ),
      uow,
    );
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
