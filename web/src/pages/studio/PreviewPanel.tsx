// The prompt preview beside the chat: what a turn of the chosen player with the character would
// use (POST /api/admin/prompts/preview): the routed protocol, the system prompt, the memories
// retrieved with their owners and scores (when the server gives them), what the context budget
// dropped, and the tools offered.
import type { Schemas } from '../../api/client';
import { droppedText, ownerOf } from './tryit';

export type Preview = Schemas['PromptPreview'];

export function PreviewPanel({
  preview,
  npcs,
  asked,
}: {
  preview: Preview | null;
  npcs: { id: number; name: string }[];
  /** The message the preview is of. */
  asked: string;
}) {
  if (!preview)
    return <p className="muted">Send a message, or preview the one typed, to see what the turn uses.</p>;
  const memories = preview.memories;
  return (
    <div className="preview">
      <p className="small">
        Of {asked ? `“${asked}”` : 'a turn with no message'} · protocol <strong>{preview.protocol}</strong> (
        {preview.reason})
      </p>
      <details open>
        <summary>System prompt</summary>
        <pre className="content" tabIndex={0} aria-label="System prompt">
          {preview.system}
        </pre>
      </details>
      <h3>Memories retrieved ({memories.length})</h3>
      <ul className="list" aria-label="Memories retrieved">
        {memories.length === 0 && <li className="muted small">None.</li>}
        {memories.map((m) => {
          const owner = ownerOf(m, npcs);
          return (
            <li key={m.id} className="small retrieved">
              <span className="badge">{m.source}</span>
              {typeof m.similarity === 'number' && <span className="score"> {m.similarity.toFixed(2)}</span>}
              {owner && <span className="muted"> · {owner}</span>} {m.content}
            </li>
          );
        })}
      </ul>
      <p className="small">
        <strong>Dropped by the budget:</strong> {droppedText(preview.context.dropped)}
      </p>
      <h3>Tools offered ({preview.tools.length})</h3>
      <ul className="list" aria-label="Tools offered">
        {preview.tools.length === 0 && <li className="muted small">None.</li>}
        {preview.tools.map((t) => (
          <li key={t.name} className="small">
            <details>
              <summary>
                <code>{t.name}</code>: {t.description}
              </summary>
              {t.parameters && <pre className="content">{JSON.stringify(t.parameters, null, 2)}</pre>}
            </details>
          </li>
        ))}
      </ul>
    </div>
  );
}
