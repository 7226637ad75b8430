// A character's card, to make or to edit: the card's text, whose memory a player's words join
// (`playerMemory`), and its tools with their limits (ToolsEditor). Saved by POST or PUT; the
// server's refusal is shown and the form keeps what was typed. A server that does not keep tools
// answers without them: the person is told rather than left to believe they were saved.
import { useEffect, useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { FormEnd } from '../../ui';
import { bodyOf, formOf, type CardForm, type Character } from './card';
import { ToolsEditor } from './ToolsEditor';

type Item = Schemas['Item'];

export function CharacterForm({
  character,
  items,
  onSaved,
  onDeleted,
  onCancel,
}: {
  character: Character | undefined;
  items: Item[];
  onSaved: (c: Character, note: string) => void;
  onDeleted: (name: string) => void;
  onCancel: () => void;
}) {
  const [form, setForm] = useState<CardForm>(() => formOf(character));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // A change to the form clears the last refusal: it was about what was sent.
  useEffect(() => setError(null), [form]);
  const set = <K extends keyof CardForm>(key: K, value: CardForm[K]) =>
    setForm((f) => ({ ...f, [key]: value }));
  const text = (key: 'name' | 'description' | 'personality' | 'speakingStyle' | 'goals') => ({
    value: form[key],
    onChange: (e: { target: { value: string } }) => set(key, e.target.value),
  });

  async function save(e: FormEvent) {
    e.preventDefault();
    const r = bodyOf(form, character);
    if ('errors' in r) return setError(r.errors.join(' '));
    setError(null);
    setBusy(true);
    const body = r.body as Schemas['Npc'] & typeof r.body;
    const { data, error: err } = character
      ? await api.PUT('/api/admin/data/npcs/{id}', { params: { path: { id: character.id } }, body })
      : await api.POST('/api/admin/data/npcs', { body });
    setBusy(false);
    if (err || !data) return setError(describe(err));
    const answer = data as Character;
    const lost = r.body.tools && !answer.tools;
    onSaved(
      answer,
      `${answer.name} saved.${lost ? ' This server does not keep characters’ tools yet: the limits were not saved.' : ''}`,
    );
  }

  async function remove() {
    if (!character) return;
    const { error: err } = await api.DELETE('/api/admin/data/npcs/{id}', {
      params: { path: { id: character.id } },
    });
    if (err) return setError(describe(err));
    onDeleted(character.name);
  }

  const title = character ? `Edit ${character.name}` : 'New character';
  return (
    // The card's own checks name each mistake (the browser's would stop the form unexplained).
    <form className="card" aria-label={title} noValidate onSubmit={(e) => void save(e)}>
      <h2>{title}</h2>
      <label>
        Name
        <input {...text('name')} required maxLength={100} autoComplete="off" />
      </label>
      <label>
        Description
        <textarea {...text('description')} rows={3} />
      </label>
      <label>
        Personality
        <textarea {...text('personality')} rows={3} placeholder="Who the character is, in a few sentences" />
      </label>
      <label>
        Speaking style
        <textarea {...text('speakingStyle')} rows={2} placeholder="How the character speaks" />
      </label>
      <label>
        Goals (one a line)
        <textarea {...text('goals')} rows={3} placeholder="What the character wants" />
      </label>
      <fieldset>
        <legend>What a player tells this character</legend>
        <label className="check">
          <input
            type="radio"
            name="playerMemory"
            checked={form.playerMemory === 'own'}
            onChange={() => set('playerMemory', 'own')}
          />
          stays this character’s own knowledge of the player
        </label>
        <label className="check">
          <input
            type="radio"
            name="playerMemory"
            checked={form.playerMemory === 'shared'}
            onChange={() => set('playerMemory', 'shared')}
          />
          joins the pool every “shared” character reads
        </label>
      </fieldset>
      <ToolsEditor form={form} items={items} onChange={setForm} />
      <FormEnd
        error={error}
        submit={busy ? 'Saving…' : character ? 'Save character' : 'Create character'}
        onCancel={onCancel}
      />
      {character && !character.isAssistant && (
        <div className="row danger-zone">
          <button type="button" className="danger" onClick={() => void remove()}>
            Delete {character.name}
          </button>
        </div>
      )}
    </form>
  );
}
