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
      findConversation: (db) => repo.findConversation(db, 4),
      findConversations: (db) => repo.findConversations(db, [4, 5]),
      findDefaultConversations: (db) => repo.findDefaultConversations(db, [7, 8]),
      directConversation: (db) => repo.directConversation(db, 7, 9),
      conversationsWith: (db) => repo.conversationsWith(db, 7, [9], undefined),
      'conversationsWith (shared pool)': (db) => repo.conversationsWith(db, 7, [9, 10], [9, 10, 11]),
      findByClientMessageId: (db) => repo.findByClientMessageId(db, 7, 'c-1'),
      insertMessageWithHistory: (db) => repo.insertMessageWithHistory(db, message, 12),
      insertMessage: (db) => repo.insertMessage(db, { ...message, npcUserId: 9 }),
      reserveMessageId: (db) => repo.reserveMessageId(db),
      history: (db) => repo.history(db, 4, 12, 100),
      storeReplies: (db) =>
        repo.storeReplies(
          db,
          [{ id: 101, conversationId: 4, userId: 7, role: 'assistant', text: 'Hi', replyToId: 100 }],
          100,
        ),
      repliesTo: (db) => repo.repliesTo(db, 100),
      setMessageStatus: (db) => repo.setMessageStatus(db, 100, 'failed'),
      insertConversation: (db) =>
        repo.insertConversation(db, { userId: 7, title: 'tavern', npcUserIds: [9, 10] }),
      listConversations: (db) => repo.listConversations(db, 7, 50, 0),
      deleteConversation: (db) => repo.deleteConversation(db, 4, 7),
      lastAssistantMessage: (db) => repo.lastAssistantMessage(db, 4),
      countConversations: (db) => repo.countConversations(db),
      countMessages: (db) => repo.countMessages(db, 24),
    });
    await expect(text).toMatchFileSnapshot('./sql/conversations.sql');
  });
});
