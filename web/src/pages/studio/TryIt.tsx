// Try it: talk with the chosen character (a direct message, or a scene with other characters,
// streamed) with the prompt preview beside it, read for each message sent or for the one typed.
// The chat goes as the signed-in admin; the preview is of the player chosen (the admin by
// default): no route lets an admin chat as someone else.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, describe } from '../../api/client';
import type { PageProps } from '../../App';
import { Alert } from '../../ui';
import { CharacterPicker } from './CharacterPicker';
import { PreviewPanel, type Preview } from './PreviewPanel';
import { previewRequest, type Mode } from './tryit';
import { useCharacters, useChosen, usePlayers } from './useStudio';
import { useTryChat } from './useTryChat';

export default function TryIt({ user }: PageProps) {
  const characters = useCharacters();
  const players = usePlayers();
  const [chosen, choose] = useChosen();
  const npcs = characters.data ?? [];
  const character = npcs.find((c) => c.id === chosen);
  const [playerId, setPlayerId] = useState(user.id);
  const [mode, setMode] = useState<Mode>('scene');
  const [others, setOthers] = useState<number[]>([]);
  const npcId = character?.id ?? 0;
  const chat = useTryChat({ npcId, others: others.filter((o) => o !== npcId), mode });
  const [text, setText] = useState('');
  const [preview, setPreview] = useState<{ of: string; answer: Preview } | null>(null);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const logRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    logRef.current?.scrollTo({ top: logRef.current.scrollHeight });
  }, [chat.lines]);
  useEffect(() => setPreview(null), [npcId, playerId, mode]);

  async function readPreview(message: string, conversationId: number | null) {
    const body = previewRequest({ playerId, meId: user.id, npcId, message, mode, conversationId });
    let res = await api.POST('/api/admin/prompts/preview', { body: body as never });
    // A server that does not know `direct` yet refuses it: ask again without.
    let old = false;
    if (res.error && 'direct' in body && JSON.stringify(res.error).includes('direct')) {
      const { direct: _, ...plain } = body;
      old = true;
      res = await api.POST('/api/admin/prompts/preview', { body: plain as never });
    }
    if (res.error || !res.data)
      return setPreviewError(
        `${describe(res.error)}${old ? ' (This server cannot preview a direct message yet.)' : ''}`,
      );
    setPreviewError(null);
    setPreview({ of: message, answer: res.data });
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!character) return;
    const message = text;
    const sent = await chat.send(message, character.name);
    if (sent === false) return;
    setText((t) => (t === message ? '' : t));
    void readPreview(message, sent);
  }

  const otherNpcs = npcs.filter((n) => n.id !== npcId && !n.isAssistant);
  const asOther = playerId !== user.id;
  return (
    <>
      <div className="card try-setup">
        <div className="row wrap">
          <CharacterPicker characters={npcs} chosen={chosen} onChoose={choose} />
          <div className="picker">
            <label htmlFor="try-player">Player</label>
            <select id="try-player" value={playerId} onChange={(e) => setPlayerId(Number(e.target.value))}>
              <option value={user.id}>{user.name || user.email} (you)</option>
              {(players.data ?? [])
                .filter((p) => p.id !== user.id)
                .map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name || p.email}
                  </option>
                ))}
            </select>
          </div>
          <fieldset className="row wrap">
            <legend>Talk</legend>
            <label className="check">
              <input type="radio" name="mode" checked={mode === 'scene'} onChange={() => setMode('scene')} />
              in a scene (streamed)
            </label>
            <label className="check">
              <input
                type="radio"
                name="mode"
                checked={mode === 'direct'}
                onChange={() => setMode('direct')}
              />
              by direct message
            </label>
          </fieldset>
        </div>
        {mode === 'scene' && otherNpcs.length > 0 && (
          <fieldset className="row wrap">
            <legend>Others in the scene</legend>
            {otherNpcs.map((n) => (
              <label key={n.id} className="check">
                <input
                  type="checkbox"
                  checked={others.includes(n.id)}
                  onChange={(e) =>
                    setOthers((xs) => (e.target.checked ? [...xs, n.id] : xs.filter((x) => x !== n.id)))
                  }
                />
                {n.name}
              </label>
            ))}
          </fieldset>
        )}
        {asOther && (
          <p className="small muted">
            Messages are sent as you; the preview shows what a turn of the chosen player would use.
          </p>
        )}
        <Alert message={characters.error ?? players.error} />
      </div>
      {!character ? (
        <p className="card muted">Choose the character to talk with.</p>
      ) : (
        <div className="try">
          <section className="card talk" aria-labelledby="try-chat-title">
            <h2 id="try-chat-title">Talk with {character.name}</h2>
            <div
              className="log"
              role="log"
              aria-label={`Conversation with ${character.name}`}
              tabIndex={0}
              ref={logRef}
            >
              {chat.lines.length === 0 && <p className="muted">Say something to {character.name}.</p>}
              {chat.lines.map((l) => (
                <div key={l.key} className={`msg ${l.role}${l.pending ? ' pending' : ''}`}>
                  {l.role === 'assistant' ? (
                    <strong className="who-said">{l.who ?? character.name}: </strong>
                  ) : (
                    <span className="sr">You: </span>
                  )}
                  {l.text}
                  {l.usage && (
                    <span className="usage small block">
                      {l.usage.inputTokens} tokens in · {l.usage.outputTokens} out
                    </span>
                  )}
                </div>
              ))}
              {chat.thinking && <p className="muted">{character.name} is answering…</p>}
            </div>
            <Alert message={chat.error} />
            <form className="row compose" onSubmit={(e) => void submit(e)}>
              <label className="grow">
                <span className="sr">Message</span>
                <input
                  aria-label="Message"
                  value={text}
                  onChange={(e) => setText(e.target.value)}
                  autoComplete="off"
                  placeholder={`Write to ${character.name}`}
                />
              </label>
              <button type="submit" disabled={!chat.connected || !text.trim()}>
                Send
              </button>
            </form>
          </section>
          <section className="card" aria-labelledby="preview-title">
            <div className="row heading-row wrap">
              <h2 id="preview-title" className="grow">
                Prompt preview
              </h2>
              <button
                type="button"
                className="secondary"
                onClick={() => void readPreview(text, chat.conversationId)}
              >
                Preview the typed message
              </button>
            </div>
            <Alert message={previewError} />
            <PreviewPanel preview={preview?.answer ?? null} npcs={npcs} asked={preview?.of ?? ''} />
          </section>
        </div>
      )}
    </>
  );
}
