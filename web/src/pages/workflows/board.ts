// The workflows board: its columns, an instance's name on it, and an artifact's review shown at
// once. Pure: tested alone.
import type { Schemas } from '../../api/client';

type Instance = Schemas['WorkflowInstance'];
type Definition = Schemas['WorkflowDefinition'];
type Artifact = Schemas['WorkflowArtifact'];

/** The board's columns: the definition's states in its order, else the states instances are in. */
export function boardStates(definition: Definition | undefined, instances: Instance[]): string[] {
  return definition?.states.map((s) => s.name) ?? [...new Set(instances.map((i) => i.state))];
}

/** An instance on the board: its title if its context has one, else its definition; and the
 * start of its id, which tells two of the same apart. */
export function instanceLabel(i: Pick<Instance, 'id' | 'context' | 'machineId'>): string {
  const name = typeof i.context.title === 'string' ? i.context.title : i.machineId;
  return `${name} · ${i.id.slice(0, 8)}`;
}

/** The artifacts with one of them reviewed (or updated by its answer), the others as they were. */
export function withArtifact(artifacts: Artifact[], changed: Pick<Artifact, 'id'> & Partial<Artifact>) {
  return artifacts.map((a) => (a.id === changed.id ? { ...a, ...changed } : a));
}
