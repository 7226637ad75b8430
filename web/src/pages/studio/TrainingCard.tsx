// Teaching a character: a text stored as its memories at once (POST /api/training/ingest-text),
// or a file or screenshot sent as a job (multipart, 202) whose progress JobsCard follows.
import { useState, type FormEvent } from 'react';
import { api, authFetch, describe } from '../../api/client';
import { Alert } from '../../ui';
import type { Character } from './card';

type Kind = 'text' | 'file' | 'screenshot';
const KINDS: { kind: Kind; label: string }[] = [
  { kind: 'text', label: 'Text' },
  { kind: 'file', label: 'File' },
  { kind: 'screenshot', label: 'Screenshot' },
];

export function TrainingCard({
  character,
  onLearnt,
  onStarted,
}: {
  character: Character;
  onLearnt: () => void;
  onStarted: () => void;
}) {
  const [kind, setKind] = useState<Kind>('text');
  const [title, setTitle] = useState('');
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [languages, setLanguages] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  // A new file input after each send (a file input cannot be cleared from code otherwise).
  const [inputKey, setInputKey] = useState(0);

  async function teach(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setStatus('');
    setBusy(true);
    try {
      if (kind === 'text') {
        const { data, error: err } = await api.POST('/api/training/ingest-text', {
          body: { npcUserId: character.id, text, ...(title.trim() ? { title: title.trim() } : {}) },
        });
        if (err || !data) return setError(describe(err));
        const n = data.memoryIds.length;
        setStatus(`${character.name} learnt the text: ${n} ${n === 1 ? 'memory' : 'memories'}.`);
        setText('');
        setTitle('');
        onLearnt();
        return;
      }
      if (!file) return setError('Choose a file to send.');
      const form = new FormData();
      form.append('npcUserId', String(character.id));
      if (kind === 'file' && title.trim()) form.append('title', title.trim());
      if (kind === 'screenshot' && languages.trim()) form.append('languages', languages.trim());
      form.append('file', file, file.name);
      const path = kind === 'file' ? '/api/training/ingest-file' : '/api/training/ingest-screenshot';
      const res = await authFetch(new Request(path, { method: 'POST', body: form }));
      const body = (await res.json()) as unknown;
      if (!res.ok) return setError(describe(body));
      setStatus(`${file.name} is being read: its progress is below.`);
      setFile(null);
      setTitle('');
      setInputKey((k) => k + 1);
      onStarted();
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card" aria-labelledby="teach-title" onSubmit={(e) => void teach(e)}>
      <h2 id="teach-title">Teach {character.name}</h2>
      <fieldset className="row wrap segmented">
        <legend>What to teach</legend>
        {KINDS.map((k) => (
          <label key={k.kind} className="check">
            <input
              type="radio"
              name="teach-kind"
              checked={kind === k.kind}
              onChange={() => {
                setKind(k.kind);
                setError(null);
              }}
            />
            {k.label}
          </label>
        ))}
      </fieldset>
      {kind !== 'screenshot' && (
        <label>
          Title (optional)
          <input value={title} onChange={(e) => setTitle(e.target.value)} maxLength={200} />
        </label>
      )}
      {kind === 'text' ? (
        <label>
          Text to learn
          <textarea value={text} onChange={(e) => setText(e.target.value)} rows={6} required />
        </label>
      ) : (
        <label>
          {kind === 'file' ? 'File (PDF, DOCX or text)' : 'Screenshot (PNG, JPEG or WebP)'}
          <input
            key={`${kind}-${inputKey}`}
            type="file"
            accept={
              kind === 'file'
                ? '.pdf,.docx,.txt,.md,text/plain,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document'
                : 'image/png,image/jpeg,image/webp'
            }
            onChange={(e) => setFile(e.target.files?.[0] ?? null)}
          />
        </label>
      )}
      {kind === 'screenshot' && (
        <label>
          Languages of its text (optional: eng, fra)
          <input value={languages} onChange={(e) => setLanguages(e.target.value)} placeholder="eng,fra" />
        </label>
      )}
      <Alert message={error} />
      <p role="status" className="muted">
        {status}
      </p>
      <div className="row">
        <button type="submit" disabled={busy}>
          {busy ? 'Sending…' : kind === 'text' ? 'Teach the text' : `Send the ${kind}`}
        </button>
      </div>
    </form>
  );
}
