// The SQL of the chat turn's reads and writes and of conversations, snapshotted (sql/*.sql): a
// query change shows in review as a change of the file (`npx vitest run -u` rewrites it).
import { describe, expect, it } from 'vitest';
import { sqlSnapshot } from '../../../test/sql-snapshot.js';
import * as repo from './conversations.repository.js';

const message = {
  conversationId: 4,
  userId: 7,
  role: 'user' as const,
  text: 'Hello',
  clientMessageId: 'c-1',
  status: 'received' as const,
};

describe('conversations repository SQL', () => {
  it("the chat turn's statements and the conversation routes'", async () => {
    const text = await sqlSnapshot({
      defaultConversation: (db) => repo.defaultConversation(db, 7),
      findByClientMessageId: (db) => repo.findByClientMessageId(db, 7, 'c-1'),
      insertMessageReservingReply: (db) => repo.insertMessageReservingReply(db, message),
      history: (db) => repo.history(db, 4, 12, 100),
      storeReplies: (db) =>
        repo.storeReplies(
          db,
          [{ id: 101, conversationId: 4, userId: 7, role: 'assistant', text: 'Hi', replyToId: 100 }],
          100,
        ),
      repliesTo: (db) => repo.repliesTo(db, 100),
      setMessageStatus: (db) => repo.setMessageStatus(db, 100, 'failed'),
      listConversations: (db) => repo.listConversations(db, 7, 50, 0),
      lastAssistantMessage: (db) => repo.lastAssistantMessage(db, 4),
      countMessages: (db) => repo.countMessages(db, 24),
    });
    await expect(text).toMatchFileSnapshot('./sql/conversations.sql');
  });
});
