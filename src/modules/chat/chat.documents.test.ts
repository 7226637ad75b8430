// Documents attached to a chat message by `uploadContextId`, end to end: uploaded over real
// multipart HTTP, read by the extractor's worker threads, their passages in the system prompt the
// fake model server receives, stored as `document_ingestion` memories a later turn retrieves, and a
// file that cannot be read refused with a chatError that names it. Then ChatDocuments alone, with
// a fake extractor, for what a real file cannot show on demand (a reader that never answers).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { buildDocx, buildPdf, postForm, type FormFile } from '../../../test/documents.js';
import { chatClient as connect, type ChatTestSocket } from './chat.fixtures.js';
import { ChatDocuments } from './chat.documents.js';
import { DOCUMENT_CONTEXT_CHARS } from './chat.documents.rules.js';
import type { DocumentExtractor } from './chat.types.js';

let fake: FakeModelServer;
let t: TestApp;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(
    fake.env({ MODEL_MAX_RETRIES: '1', MODEL_RETRY_BASE_MS: '10', CHAT_RATE_LIMIT: '1000' }),
  );
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});
beforeEach(() => fake.reset());
// A failed test's socket would keep the server from closing.
const sockets: ChatTestSocket[] = [];
afterEach(() => sockets.splice(0).forEach((c) => c.socket.close()));
async function chatClient(app: TestApp, user: TestUser): Promise<ChatTestSocket> {
  const c = await connect(app, user);
  sockets.push(c);
  return c;
}

let users = 0;
const newUser = () => createUser(t, 'public', { name: `Reader${++users}` });

async function upload(user: TestUser, files: FormFile[]): Promise<string> {
  const res = await postForm(t, '/api/files/upload', user.accessToken, {}, files);
  expect(res.status).toBe(201);
  return res.body.uploadContextId as string;
}

const systemPrompt = (n: number) => String(fake.chatRequests()[n]!.body.messages[0].content);

/** The attached document's section of a system prompt: from its heading to the next instruction. */
function section(system: string, name: string): string {
  const start = system.indexOf(`## Attached document: ${name}\n`);
  expect(start).toBeGreaterThanOrEqual(0);
  const end = system.indexOf('\n\nAnswer in a short paragraph.', start);
  const next = system.indexOf('\n\n## Attached document: ', start + 1);
  return system.slice(start, next > 0 && next < end ? next : end);
}

const documentMemories = (userId: number) =>
  t.deps.db
    .selectFrom('memories')
    .select(['content', 'metadata', 'conversation_id'])
    .where('user_id', '=', userId)
    .where('source', '=', 'document_ingestion')
    .orderBy('id')
    .execute();

/** Paragraph `i` of a long document that is about orchards only. */
const filler = (i: number) =>
  `Paragraph ${i} describes the orchard rows, the pruning calendar and the cider press in plain words. ` +
  `Its apples ripen late and the farmers sort them by colour before the autumn fair begins.`;

describe('documents attached to chatMessage', () => {
  it('give the turn the passages that bear on the message, within the budget, and nothing else', async () => {
    const user = await newUser();
    const paragraphs = Array.from({ length: 80 }, (_, i) => filler(i));
    paragraphs[60] = "The lighthouse keeper's door code is AMBER-7741, changed each spring.";
    paragraphs[40] = 'A zebra crossing near the market was repainted ZEBRA-0001 last year.';
    const text = paragraphs.join('\n\n');
    const uploadContextId = await upload(user, [{ name: 'orchard-notes.txt', data: Buffer.from(text) }]);
    const c = await chatClient(t, user);
    fake.replyChat({ text: 'It is AMBER-7741.' });
    const { ack } = await c.send('chatMessage', {
      message: "What is the lighthouse keeper's door code?",
      uploadContextId,
    });
    expect(ack).toMatchObject({ ok: true });
    const part = section(systemPrompt(0), 'orchard-notes.txt');
    expect(part).toContain('AMBER-7741');
    expect(part).toContain('those that bear most on the message');
    expect(part).toContain('Paragraph 0 ');
    expect(part).not.toContain('ZEBRA-0001');
    expect(part.length).toBeLessThanOrEqual(DOCUMENT_CONTEXT_CHARS + 200);
    expect(text.length).toBeGreaterThan(DOCUMENT_CONTEXT_CHARS);
    // The whole text is stored, the far passage too, in parts naming the file.
    const stored = await documentMemories(user.id);
    expect(stored.length).toBeGreaterThan(1);
    expect(stored.some((m) => m.content.includes('ZEBRA-0001'))).toBe(true);
    expect(stored[0]!.content.startsWith(`[orchard-notes.txt, part 1 of ${stored.length}]\n`)).toBe(true);
  });

  it('read a PDF and a DOCX into the prompt, store them with fileContext, and a later turn retrieves them', async () => {
    const user = await newUser();
    const pdf = await buildPdf([
      ['Quarterly report of the harbour.', 'The ferry Nightjar sails at 06:40 daily.'],
    ]);
    const docx = await buildDocx(['Minutes of the guild.', 'The treasurer is Odalys Brennan.']);
    const uploadContextId = await upload(user, [
      { name: 'report.pdf', data: pdf },
      { name: 'minutes.docx', data: docx },
    ]);
    const c = await chatClient(t, user);
    fake.replyChat({ text: 'Noted.' });
    const first = await c.send('chatMessage', {
      message: 'When does the ferry sail, and who is the treasurer?',
      clientMessageId: 'docs-1',
      uploadContextId,
    });
    expect(first.ack).toMatchObject({ ok: true });
    const system = systemPrompt(0);
    expect(section(system, 'report.pdf')).toContain('The ferry Nightjar sails at 06:40 daily.');
    expect(section(system, 'minutes.docx')).toContain('The treasurer is Odalys Brennan.');

    const stored = await documentMemories(user.id);
    expect(stored).toHaveLength(2);
    const messageId = first.ack.messageId;
    expect(stored.map((m) => m.metadata)).toEqual([
      expect.objectContaining({
        fileContext: 'report.pdf',
        uploadContextId,
        mimeType: 'application/pdf',
        conversationId: first.ack.conversationId,
        messageId,
        part: 1,
        parts: 1,
      }),
      expect.objectContaining({
        fileContext: 'minutes.docx',
        uploadContextId,
        mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        messageId,
      }),
    ]);
    expect(stored.every((m) => m.conversation_id === first.ack.conversationId)).toBe(true);

    // A later turn, without the attachment, finds the document among the player's memories.
    fake.reset();
    fake.replyChat({ text: 'At 06:40.' });
    const later = await c.send('chatMessage', { message: 'Remind me: when does the ferry Nightjar sail?' });
    expect(later.ack).toMatchObject({ ok: true });
    expect(systemPrompt(0)).not.toContain('## Attached document:');
    expect(systemPrompt(0)).toContain('The ferry Nightjar sails at 06:40 daily.');
  });

  it('refuse the message with a chatError naming each file that cannot be read; nothing is stored or lost', async () => {
    const user = await newUser();
    const corrupt = Buffer.concat([
      Buffer.from('%PDF-1.7\n'),
      Buffer.alloc(2048, 0x5a),
      Buffer.from('\n%%EOF\n'),
    ]);
    const uploadContextId = await upload(user, [
      { name: 'broken.pdf', data: corrupt },
      { name: 'blank.txt', data: Buffer.from('   \n\t\n   \n') },
      { name: 'fine.txt', data: Buffer.from('A perfectly readable note.') },
    ]);
    const c = await chatClient(t, user);
    const { ack, events } = await c.send('chatMessage', {
      message: 'What do these say?',
      clientMessageId: 'unreadable-1',
      uploadContextId,
    });
    expect(ack).toMatchObject({ ok: false, error: { code: 'validation_failed', status: 400 } });
    const errors = (ack as { error: { errors: { path: string; message: string }[] } }).error.errors;
    expect(errors).toEqual([
      {
        path: 'chatMessage.uploadContextId',
        message: expect.stringMatching(/^broken\.pdf: it cannot be read as PDF/),
      },
      { path: 'chatMessage.uploadContextId', message: 'blank.txt: it holds no text' },
    ]);
    const error = events.find((e) => e.name === 'chatError')!.payload;
    expect(error).toMatchObject({ code: 'validation_failed', clientMessageId: 'unreadable-1' });
    expect(typeof error.conversationId).toBe('number');
    expect(events.map((e) => e.name)).not.toContain('assistantThinking');
    // No model call, no message, no memory; the upload is still there to be fixed or resent.
    expect(fake.chatRequests()).toHaveLength(0);
    const messages = await t.deps.db
      .selectFrom('chat_messages')
      .select('id')
      .where('client_message_id', '=', 'unreadable-1')
      .execute();
    expect(messages).toEqual([]);
    expect(await documentMemories(user.id)).toEqual([]);
    expect(await t.deps.services.files.readContext(user.id, uploadContextId)).toHaveLength(3);
    // The same message without the files goes through.
    fake.replyChat({ text: 'Nothing attached now.' });
    const resent = await c.send('chatMessage', {
      message: 'What do these say?',
      clientMessageId: 'unreadable-1',
    });
    expect(resent.ack).toMatchObject({ ok: true });
  });

  it('are stored once when a failed turn is retried with its clientMessageId, and read again for it', async () => {
    const user = await newUser();
    const uploadContextId = await upload(user, [
      { name: 'recipe.txt', data: Buffer.from('Bake the rye loaf at 220 degrees for forty minutes.') },
    ]);
    const c = await chatClient(t, user);
    fake.failNext('chat', { status: 500, times: 5 });
    const failed = await c.send('chatMessage', {
      message: 'How long does the rye loaf bake?',
      clientMessageId: 'retry-doc',
      uploadContextId,
    });
    expect(failed.ack).toMatchObject({ ok: false, error: { code: 'model_unavailable' } });
    const afterFailure = await documentMemories(user.id);
    expect(afterFailure).toHaveLength(1);

    fake.reset();
    fake.replyChat({ text: 'Forty minutes.' });
    const retry = await c.send('chatMessage', {
      message: 'How long does the rye loaf bake?',
      clientMessageId: 'retry-doc',
      uploadContextId,
    });
    expect(retry.ack).toMatchObject({ ok: true });
    expect(section(systemPrompt(0), 'recipe.txt')).toContain('220 degrees for forty minutes');
    expect(await documentMemories(user.id)).toEqual(afterFailure);
    const rows = await t.deps.db
      .selectFrom('chat_messages')
      .select('status')
      .where('client_message_id', '=', 'retry-doc')
      .execute();
    expect(rows).toEqual([{ status: 'answered' }]);
  });
});

describe('ChatDocuments (a fake extractor)', () => {
  const file = (name: string, mimeType: string) => ({
    id: 1,
    name,
    mimeType,
    size: 4,
    data: Buffer.from('data'),
  });
  const memory = { addMemories: async () => [] };
  const documents = (run: DocumentExtractor['run'], timeoutMs = 50) =>
    new ChatDocuments({ run }, memory, timeoutMs);

  it('gives up on a file the reader does not answer for within the timeout', async () => {
    const never = () => new Promise<never>(() => undefined);
    await expect(
      documents(never).read('u', [file('slow.pdf', 'application/pdf')], 'hi'),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      extensions: {
        errors: [
          { path: 'chatMessage.uploadContextId', message: 'slow.pdf: it could not be read within 0.05 s' },
        ],
      },
    });
  });

  it('refuses a type no reader takes with 415, without reading anything', async () => {
    let reads = 0;
    const count = async () => {
      reads++;
      return { text: 'x', truncated: false };
    };
    await expect(
      documents(count).read('u', [file('a.txt', 'text/plain'), file('b.zip', 'application/zip')], 'hi'),
    ).rejects.toMatchObject({ code: 'unsupported_media_type', extensions: { file: 'b.zip' } });
    expect(reads).toBe(0);
  });

  it("passes on the reader's own failure (not the file's) as it is", async () => {
    const closed = () => Promise.reject(new Error('the extractor is closed'));
    await expect(documents(closed).read('u', [file('a.txt', 'text/plain')], 'hi')).rejects.toThrow(
      'the extractor is closed',
    );
  });

  it('gives each of several documents an equal share of the budget', async () => {
    const long = async () => ({ text: 'word '.repeat(5_000).trim(), truncated: false });
    const read = await documents(long).read(
      'u',
      [file('a.txt', 'text/plain'), file('b.txt', 'text/plain'), file('c.txt', 'text/plain')],
      'word',
    );
    for (const d of read) expect(d.excerpt.text.length).toBeLessThanOrEqual(DOCUMENT_CONTEXT_CHARS / 3);
    expect(read.map((d) => d.name)).toEqual(['a.txt', 'b.txt', 'c.txt']);
  });
});
