// Chat: conversations, the log, and the message form. Replies stream in by
// `assistantResponseDelta`; a `chatError` is shown and the typed message stays in the field.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, authFetch, describe, type Schemas } from '../api/client';
import { chatSocket, type ChatSocket } from '../lib/sockets';
import { isAdmin, type SessionUser } from '../lib/tokens';
import { useRead } from '../lib/useRead';
import { Alert, Page } from '../ui';

type Line = {
  key: string;
  role: 'user' | 'assistant';
  text: string;
  who?: string;
  /** The character who said it, by id, while its name is not known yet (history). */
  npc?: number;
  pending?: boolean;
};

export default function Chat({ user, admin = isAdmin(user) }: { user: SessionUser; admin?: boolean }) {
  const conversationsRead = useRead('conversations', () => api.GET('/api/conversations'));
  const conversations = conversationsRead.data?.conversations ?? [];
  const [current, setCurrent] = useState<number | null>(null);
  const [lines, setLines] = useState<Line[]>([]);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [thinking, setThinking] = useState(false);
  // The suggested replies of the conversation shown, read again when the assistant goes idle.
  const choicesRead = useRead(current === null ? null : `choices:${current}`, async () => {
    const { data, error } = await api.GET('/api/assistant/choices', {
      params: { query: { conversationId: current! } },
    });
    return { data: data?.choices ?? [], error };
  });
  const choices = choicesRead.data ?? [];
  const { reload: reloadChoices, set: setChoices } = choicesRead;
  // The conversation's history, which starts its log.
  const history = useRead(current === null ? null : `history:${current}`, () =>
    api.GET('/api/assistant/history', { params: { query: { conversationId: current!, limit: 100 } } }),
  );
  const [connected, setConnected] = useState(false);
  const [upload, setUpload] = useState<Schemas['Upload'] | null>(null);
  // Characters to start a group chat with (their list is an admin's to read).
  const characters = useRead(admin ? 'characters' : null, () => api.GET('/api/admin/data/npcs'));
  const npcs = (characters.data?.npcs ?? []).filter((n) => !n.isAssistant);
  const [cast, setCast] = useState<number[]>([]);
  const socket = useRef<ChatSocket | null>(null);
  const currentRef = useRef<number | null>(null);
  /** Messages sent and not yet answered, by clientMessageId: how to send each again. */
  const inFlight = useRef(new Map<string, () => void>());
  currentRef.current = current;
  const logRef = useRef<HTMLDivElement>(null);

  /** Reads the conversations again, then shows `select` (a new one), or the first while none is. */
  async function loadConversations(select?: number) {
    await conversationsRead.reload();
    if (select !== undefined) setCurrent(select);
  }
  useEffect(() => {
    const first = conversationsRead.data?.conversations[0];
    if (currentRef.current === null && first) setCurrent(first.id);
  }, [conversationsRead.data]);

  useEffect(() => {
    const s = chatSocket();
    socket.current = s;
    s.on('connect', () => {
      setConnected(true);
      // A message sent just before the server dropped the socket (an expired token) got no
      // answer: send it again on the new connection (its clientMessageId makes the server
      // answer a repeat without a second turn).
      for (const resend of inFlight.current.values()) resend();
    });
    s.on('disconnect', () => setConnected(false));
    s.on('assistantThinking', (e) => {
      if (e.conversationId === currentRef.current) setThinking(true);
    });
    s.on('assistantResponseDelta', (e) => {
      if (e.conversationId !== currentRef.current) return;
      setLines((ls) => {
        const key = `m${e.messageId}`;
        const at = ls.findIndex((l) => l.key === key);
        if (at < 0) return [...ls, { key, role: 'assistant', text: e.delta, pending: true }];
        const copy = ls.slice();
        copy[at] = { ...copy[at]!, text: copy[at]!.text + e.delta };
        return copy;
      });
    });
    s.on('assistantResponse', (e) => {
      if (e.conversationId !== currentRef.current) return;
      setLines((ls) => {
        const key = `m${e.messageId}`;
        const line: Line = { key, role: 'assistant', text: e.text, who: e.npcName ?? undefined };
        const at = ls.findIndex((l) => l.key === key);
        if (at < 0) return [...ls, line];
        const copy = ls.slice();
        copy[at] = line;
        return copy;
      });
    });
    s.on('assistantIdle', (e) => {
      if (e.conversationId !== currentRef.current) return;
      setThinking(false);
      void reloadChoices();
    });
    s.on('chatError', (e) => {
      setThinking(false);
      if (e.code !== 'token_expired') setError(describe(e));
    });
    s.connect();
    return () => {
      s.disconnect();
    };
  }, []);

  // Another conversation: its own log, from its history once read.
  useEffect(() => setLines([]), [current]);
  // Who said each reply of the history: the message's speaker when the server names it, else the
  // character of its npcUserId, once the characters are read (an admin's list; others see the
  // names of live replies only).
  const nameOf = (id: number | undefined) =>
    id === undefined ? undefined : characters.data?.npcs.find((n) => n.id === id)?.name;
  useEffect(() => {
    if (history.data)
      setLines(
        history.data.messages.map((m) => {
          const spoken = m as typeof m & { speaker?: { name: string } | null };
          const npc = m.role === 'assistant' && m.npcUserId !== null ? m.npcUserId : undefined;
          const who = spoken.speaker?.name ?? nameOf(npc);
          return { key: `m${m.id}`, role: m.role, text: m.text, ...(who ? { who } : npc ? { npc } : {}) };
        }),
      );
  }, [history.data]);
  useEffect(() => {
    if (characters.data)
      setLines((ls) =>
        ls.some((l) => l.npc !== undefined && !l.who)
          ? ls.map((l) => (l.who || l.npc === undefined ? l : { ...l, who: nameOf(l.npc) }))
          : ls,
      );
  }, [characters.data]);

  useEffect(() => {
    logRef.current?.scrollTo({ top: logRef.current.scrollHeight });
  }, [lines]);

  async function newConversation() {
    const names = npcs.filter((n) => cast.includes(n.id)).map((n) => n.name);
    const { data, error: err } = await api.POST('/api/conversations', {
      body: cast.length
        ? { title: `Group: ${names.join(', ')}`, npcUserIds: cast }
        : { title: 'New conversation' },
    });
    setCast([]);
    if (err || !data) setError(describe(err));
    else await loadConversations(data.id);
  }

  async function attach(files: FileList | null) {
    if (!files || files.length === 0) return;
    setError(null);
    const form = new FormData();
    for (const f of Array.from(files)) form.append('file', f, f.name);
    const res = await authFetch(new Request('/api/files/upload', { method: 'POST', body: form }));
    const body = (await res.json()) as Schemas['Upload'];
    if (!res.ok) setError(describe(body));
    else setUpload(body);
  }

  function send(message: string) {
    const s = socket.current;
    if (!s || !message.trim()) return;
    setError(null);
    setChoices([]);
    const clientMessageId = crypto.randomUUID();
    // Shown at once (replies may stream before the ack); dropped again if the server refuses it.
    const pendingKey = `c${clientMessageId}`;
    setLines((ls) => [...ls, { key: pendingKey, role: 'user', text: message, pending: true }]);
    let answered = false;
    const timer = setTimeout(() => {
      if (answered) return;
      inFlight.current.delete(clientMessageId);
      setLines((ls) => ls.filter((l) => l.key !== pendingKey));
      setError('No answer from the server; your message is still in the field.');
    }, 30_000);
    // Fixed at the first send, so a resend is the same message.
    const payload = {
      message,
      clientMessageId,
      ...(currentRef.current !== null ? { conversationId: currentRef.current } : {}),
      ...(upload ? { uploadContextId: upload.uploadContextId } : {}),
      preferences: { stream: true },
    };
    const emit = () =>
      s.emit('chatMessage', payload, (ack) => {
        if (answered) return; // a resent message may be answered twice
        answered = true;
        inFlight.current.delete(clientMessageId);
        clearTimeout(timer);
        if (!ack.ok) {
          setLines((ls) => ls.filter((l) => l.key !== pendingKey));
          setError(describe(ack.error));
          return;
        }
        // Accepted: now the field may be cleared and the message shown.
        setUpload(null);
        setText((t) => (t === message ? '' : t));
        setLines((ls) =>
          ls.map((l) => (l.key === pendingKey ? { ...l, key: `m${ack.messageId}`, pending: false } : l)),
        );
        if (currentRef.current === null) void loadConversations(ack.conversationId);
      });
    inFlight.current.set(clientMessageId, emit);
    emit();
  }

  const submit = (e: FormEvent) => {
    e.preventDefault();
    send(text);
  };

  return (
    <Page title="Chat">
      <div className="chat">
        <aside className="card conversations" aria-label="Conversations">
          <button type="button" className="secondary" onClick={() => void newConversation()}>
            New conversation
          </button>
          {npcs.length > 0 && (
            <fieldset className="cast">
              <legend>With characters</legend>
              {npcs.map((n) => (
                <label key={n.id} className="check">
                  <input
                    type="checkbox"
                    checked={cast.includes(n.id)}
                    onChange={(e) =>
                      setCast((xs) => (e.target.checked ? [...xs, n.id] : xs.filter((x) => x !== n.id)))
                    }
                  />
                  {n.name}
                </label>
              ))}
            </fieldset>
          )}
          <ul>
            {conversations.map((c) => (
              <li key={c.id}>
                <button
                  type="button"
                  className={c.id === current ? 'selected' : 'plain'}
                  aria-pressed={c.id === current}
                  onClick={() => setCurrent(c.id)}
                >
                  {c.title || `Conversation ${c.id}`}
                </button>
              </li>
            ))}
          </ul>
        </aside>
        <div className="card talk">
          <div className="log" role="log" aria-label="Conversation" tabIndex={0} ref={logRef}>
            {lines.length === 0 && <p className="muted">Say hello to start.</p>}
            {lines.map((l) => (
              <p key={l.key} className={`msg ${l.role}${l.pending ? ' pending' : ''}`}>
                {l.role === 'assistant' && l.who ? (
                  <strong className="who-said">{l.who}: </strong>
                ) : (
                  <span className="sr">{l.role === 'user' ? user.name || 'You' : 'Assistant'}: </span>
                )}
                {l.text}
              </p>
            ))}
            {thinking && <p className="muted">Assistant is typing…</p>}
          </div>
          {choices.length > 0 && (
            <div className="row choices" aria-label="Suggested replies">
              {choices.map((c) => (
                <button key={c.id} type="button" className="secondary" onClick={() => send(c.text)}>
                  {c.text}
                </button>
              ))}
            </div>
          )}
          <Alert message={error} />
          {upload && (
            <p className="small" role="status">
              Attached: {upload.files.map((f) => f.name).join(', ')}{' '}
              <button type="button" className="link" onClick={() => setUpload(null)}>
                Remove attachments
              </button>
            </p>
          )}
          <form className="row compose" onSubmit={submit}>
            <label className="attach secondary-like">
              <span>Attach</span>
              <input
                type="file"
                multiple
                aria-label="Attach files"
                className="sr"
                onChange={(e) => {
                  void attach(e.target.files);
                  e.target.value = '';
                }}
              />
            </label>
            <label className="grow">
              <span className="sr">Message</span>
              <input
                aria-label="Message"
                value={text}
                onChange={(e) => setText(e.target.value)}
                autoComplete="off"
                placeholder="Write a message"
              />
            </label>
            <button type="submit" disabled={!connected || !text.trim()}>
              Send
            </button>
          </form>
        </div>
      </div>
    </Page>
  );
}
