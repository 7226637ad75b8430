// The character a studio page works on: a select of every character, kept in the address.
import { useId } from 'react';
import type { Character } from './card';

export function CharacterPicker({
  characters,
  chosen,
  onChoose,
}: {
  characters: Character[];
  chosen: number | null;
  onChoose: (id: number | null) => void;
}) {
  // The label names the select alone (wrapped, it would read the chosen option's name too).
  const id = useId();
  return (
    <div className="picker">
      <label htmlFor={id}>Character</label>
      <select
        id={id}
        value={chosen ?? ''}
        onChange={(e) => onChoose(e.target.value ? Number(e.target.value) : null)}
      >
        <option value="">Choose a character</option>
        {characters.map((c) => (
          <option key={c.id} value={c.id}>
            {c.name}
            {c.isAssistant ? ' (the assistant)' : ''}
          </option>
        ))}
      </select>
    </div>
  );
}
