// The chat of "Try it", over the chat socket as the Chat page's: a scene is a conversation of the
// admin's with the character and the others chosen (`chatMessage` to the character, the reply
// streamed by `assistantResponseDelta`); a direct message is `directNpcMessage`, answered whole
// by `directNpcResponse`. Messages go as the signed-in admin (no route lets an admin chat as
// another player); the preview beside it is the chosen player's.
import { useEffect, useRef, useState } from 'react';
import { api, describe } from '../../api/client';
import { chatSocket, type ChatSocket } from '../../lib/sockets';
import { addDelta, addReply, type Line, type Mode } from './tryit';

export function useTryChat({ npcId, others, mode }: { npcId: number; others: number[]; mode: Mode }) {
  const [lines, setLines] = useState<Line[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [thinking, setThinking] = useState(false);
  const [connected, setConnected] = useState(false);
  const [conversationId, setConversationId] = useState<number | null>(null);
  const conversationRef = useRef<number | null>(null);
  conversationRef.current = conversationId;
  const socket = useRef<ChatSocket | null>(null);
  const cast = [npcId, ...others].join(',');

  // Another character, cast or mode: a new log (and, for a scene, a new conversation).
  useEffect(() => {
    setLines([]);
    setConversationId(null);
    setError(null);
    setThinking(false);
  }, [cast, mode]);

  useEffect(() => {
    const s = chatSocket();
    socket.current = s;
    const ours = (id: number) => id === conversationRef.current;
    s.on('connect', () => setConnected(true));
    s.on('disconnect', () => setConnected(false));
    s.on('assistantThinking', (e) => ours(e.conversationId) && setThinking(true));
    s.on('npcThinking', () => setThinking(true));
    s.on('assistantResponseDelta', (e) => {
      if (ours(e.conversationId)) setLines((ls) => addDelta(ls, e.messageId, e.delta));
    });
    s.on('assistantResponse', (e) => {
      if (ours(e.conversationId)) setLines((ls) => addReply(ls, e));
    });
    s.on('directNpcResponse', (e) => {
      setThinking(false);
      setLines((ls) => addReply(ls, e));
    });
    s.on('assistantIdle', (e) => ours(e.conversationId) && setThinking(false));
    s.on('chatError', (e) => {
      setThinking(false);
      if (e.code !== 'token_expired') setError(describe(e));
    });
    s.connect();
    return () => {
      s.disconnect();
    };
  }, []);

  /** The scene's conversation, made at its first message. */
  async function scene(npcName: string): Promise<number | null> {
    if (conversationRef.current !== null) return conversationRef.current;
    const { data, error: err } = await api.POST('/api/conversations', {
      body: { title: `Try it: ${npcName}`, npcUserIds: [npcId, ...others] },
    });
    if (err || !data) {
      setError(describe(err));
      return null;
    }
    conversationRef.current = data.id;
    setConversationId(data.id);
    return data.id;
  }

  /** Sends a message; resolves, once the server accepted it, to the scene's conversation (null for
   * a direct message), or to false when it was refused (the reply comes by events). */
  async function send(message: string, npcName: string): Promise<number | null | false> {
    const s = socket.current;
    if (!s || !message.trim()) return false;
    setError(null);
    const clientMessageId = crypto.randomUUID();
    const pendingKey = `c${clientMessageId}`;
    const conversation = mode === 'scene' ? await scene(npcName) : null;
    if (mode === 'scene' && conversation === null) return false;
    setLines((ls) => [...ls, { key: pendingKey, role: 'user', text: message, pending: true }]);
    return new Promise((resolve) => {
      const done = (ack: Parameters<NonNullable<Parameters<ChatSocket['emit']>[2]>>[0]) => {
        if (!ack.ok) {
          setLines((ls) => ls.filter((l) => l.key !== pendingKey));
          setError(describe(ack.error));
          return resolve(false);
        }
        setLines((ls) =>
          ls.map((l) => (l.key === pendingKey ? { ...l, key: `m${ack.messageId}`, pending: false } : l)),
        );
        resolve(conversation);
      };
      if (mode === 'scene')
        s.emit(
          'chatMessage',
          {
            message,
            clientMessageId,
            conversationId: conversation!,
            npcUserId: npcId,
            preferences: { stream: true },
          },
          done,
        );
      else s.emit('directNpcMessage', { message, clientMessageId, npcUserId: npcId }, done);
    });
  }

  return { lines, error, thinking, connected, conversationId, send };
}
