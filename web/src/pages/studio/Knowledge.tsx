// Knowledge and training: teach the chosen character a text, a file (PDF, DOCX, text) or a
// screenshot; follow each file's job live (`trainingProgress`) to its result and the memories
// (beliefs) it made; and list, search, edit and forget the character's memories by tier and source.
import { useState } from 'react';
import { Alert } from '../../ui';
import { CharacterPicker } from './CharacterPicker';
import { JobsCard } from './JobsCard';
import { MemoriesCard } from './MemoriesCard';
import { TrainingCard } from './TrainingCard';
import { useCharacters, useChosen } from './useStudio';

export default function Knowledge() {
  const characters = useCharacters();
  const [chosen, choose] = useChosen();
  // Bumped when training stored memories: the memory list reads again.
  const [learnt, setLearnt] = useState(0);
  // Bumped when a file or screenshot job was accepted: the job list reads again.
  const [started, setStarted] = useState(0);
  const character = characters.data?.find((c) => c.id === chosen);
  return (
    <>
      <div className="card">
        <CharacterPicker characters={characters.data ?? []} chosen={chosen} onChoose={choose} />
        <Alert message={characters.error} />
      </div>
      {character ? (
        <div className="studio-columns">
          <div>
            <TrainingCard
              character={character}
              onLearnt={() => setLearnt((n) => n + 1)}
              onStarted={() => setStarted((n) => n + 1)}
            />
            <JobsCard npcId={character.id} started={started} onFinished={() => setLearnt((n) => n + 1)} />
          </div>
          <MemoriesCard npcId={character.id} revision={learnt} />
        </div>
      ) : (
        <p className="card muted">Choose the character to teach.</p>
      )}
    </>
  );
}
