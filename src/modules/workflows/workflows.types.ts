// The shapes the workflows module's services share: who acts, the ports for the parts built
// beside it, and what it is built from.
import type { Db, Executor } from '../../platform/db/database.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import type { AddMemoryInput } from '../memory/index.js';
import type { ProtocolDefinition } from '../protocols/index.js';
import type { TimelineEvent, TimelineService } from '../timeline/index.js';
import type { WorkflowIssues } from './workflows.issues.js';
import type { RunTrigger } from './workflows.tables.js';

/** Who acts: the signed-in user (routes), or a chat-platform command's linked user. */
export interface WorkflowActor {
  id: number;
  name: string;
  admin: boolean;
}

/** A run handed to whatever executes runs (the orchestrator's job). */
export interface RunHandle {
  id: string;
  instanceId: string;
  trigger: RunTrigger;
  taskIds: string[];
}

/** Seams for the parts built beside this module: the orchestrator executes runs, the suggestions
 * configuration says whether execution start kicks one off, the
 * chat-platform adapter posts notifications. Each is optional: without an executor no run is
 * started on entry and a rerun is refused (503), without a notifier nothing is posted. */
export interface WorkflowPorts {
  /** Executes a committed run (called after commit). */
  runExecutor?: ((run: RunHandle) => void) | undefined;
  /** The creator's `autoRunOrchestrator` (default true), read in the transaction of the write
   * that enters the execution state. */
  autoRunOrchestrator?: ((userId: number, executor: Executor) => Promise<boolean>) | undefined;
  /** Every `workflow_*` (and `verification_evidence`) event of an instance that names a channel,
   * for the chat-platform adapter to post (called after commit; must not throw). */
  notify?: ((n: WorkflowNotice) => void) | undefined;
}

/** A committed timeline event of an instance that names a chat-platform channel. */
export interface WorkflowNotice {
  channelId: string;
  guildId: string | null;
  instanceId: string;
  machineId: string;
  /** The instance's `context.title`, when it has one. */
  title: string | null;
  event: TimelineEvent;
}

export interface WorkflowsDeps {
  db: Db;
  timeline: TimelineService;
  protocols: {
    seedBuiltin(list: readonly (ProtocolDefinition & { id: string })[]): Promise<{ inserted: string[] }>;
  };
  /** The memory module's addMemory (collectArtifacts writes the creator a `shared` memory). */
  addMemory: (input: AddMemoryInput, uow: UnitOfWork) => Promise<{ id: number }>;
  /** Whether a user id is a character (an NPC or the assistant): task assignment. */
  isCharacter: (userId: number, executor: Executor) => Promise<boolean>;
  /** The issue tracker collectArtifacts files an issue in (unset: none is configured). */
  issues?: Pick<WorkflowIssues, 'file'> | undefined;
}
