// The turn's prompt, pure: the system prompt (the routed protocol composed with the turn's values,
// then who speaks, the length and language asked for, and the choices instruction) and the
// messages (the conversation's earlier messages, at most `historyMessages`, then the new one).
import type { ChatMessage as ModelMessage, ToolSpec } from '../../platform/models/provider.js';
import type { ConversationContext } from '../memory/index.js';
import {
  composeSystemPrompt,
  groundFloorSection,
  type ResolvedProtocol,
  type ToolDefinition,
} from '../protocols/index.js';
import { CHOICES_INSTRUCTION, directorInstruction, lengthInstruction, type Npc } from './chat.rules.js';
import type { UserPreferences } from './chat.schemas.js';
import type { Speaker } from './chat.types.js';
import { documentsSection, type AttachedDocument } from './chat.documents.rules.js';
import { DATA_NOTICE, quoted } from './chat.quoting.js';

export interface PromptInput {
  protocol: ResolvedProtocol;
  /** Every tool the service has; the protocol allows a subset (to the director in a group turn). */
  specs: ToolSpec[];
  assistantName: string;
  playerName: string;
  /** The lead first; more than one makes a group turn (the director speaks for them). */
  speakers: Speaker[];
  memoryContext: ConversationContext['memoryContext'];
  /** The context's other sections (fitContext): quests, state and relationships, inventory. */
  contextValues: { questSummary: string; stateSummary: string; inventorySummary: string };
  /** What the protocol grants beyond the conversation (fitContext's section), or ''. */
  knowledge: string;
  prefs: UserPreferences | undefined;
  /** The conversation's messages read for the turn (possibly with the new one among them). */
  history: { id: number; role: 'user' | 'assistant'; text: string }[];
  /** The new message's id: only messages before it are history. */
  messageId: number;
  historyMessages: number;
  text: string;
  /** YYYY-MM-DD, given (the prompt's date placeholder). */
  today: string;
  /** The ground-floor rules: given for the assistant's own turns (never an NPC's, never a group),
   * they close the system prompt. */
  groundFloor?: readonly string[] | undefined;
  /** The documents attached to the message: their passages, after who speaks, before the instructions. */
  documents?: readonly AttachedDocument[] | undefined;
}

export function buildPrompt(p: PromptInput): {
  system: string;
  messages: ModelMessage[];
  /** The tools the protocol allows (a group turn's director gets the same). */
  tools: readonly ToolDefinition[];
} {
  const group = p.speakers.length > 1;
  const lead = p.speakers[0]!;
  const { worldContext, assistantContext, personalContext } = p.memoryContext;
  // Memories, documents and the system's events are quoted data (chat.quoting.ts), never orders.
  const memoryContext = [
    worldContext && `World:\n${quoted('world memories', worldContext)}`,
    assistantContext && `About ${lead.name}:\n${quoted(`memories of ${lead.name}`, assistantContext)}`,
    personalContext && `About the player:\n${quoted("the player's memories", personalContext)}`,
  ]
    .filter(Boolean)
    .join('\n\n');
  const composed = composeSystemPrompt(p.protocol, {
    tools: p.specs,
    values: {
      assistantName: p.assistantName,
      playerName: p.playerName,
      npcName: lead.name,
      memoryContext,
      ...p.contextValues,
      language: p.prefs?.language,
      responseLength: p.prefs?.responseLength,
      date: p.today,
    },
  });
  const documents = quoted('attached documents', documentsSection(p.documents));
  const knowledge = quoted('system knowledge', p.knowledge);
  const system = [
    composed.system,
    memoryContext || documents || knowledge ? DATA_NOTICE : '',
    knowledge,
    group
      ? directorInstruction(
          p.speakers.map((s): Npc => ({ id: s.id, name: s.name, description: s.description })),
        )
      : `You are ${lead.name}.${lead.description ? ` ${lead.description}` : ''}`,
    documents,
    lengthInstruction(p.prefs),
    p.prefs?.language ? `Answer in the language ${p.prefs.language}.` : '',
    group ? '' : CHOICES_INSTRUCTION,
    !group && p.groundFloor ? groundFloorSection(p.groundFloor) : '',
  ]
    .filter(Boolean)
    .join('\n\n');
  // slice(-0) would keep everything: CHAT_HISTORY_MESSAGES=0 means no history.
  const earlier =
    p.historyMessages === 0 ? [] : p.history.filter((m) => m.id < p.messageId).slice(-p.historyMessages);
  const messages: ModelMessage[] = [
    ...earlier.map((m): ModelMessage =>
      m.role === 'user' ? { role: 'user', content: m.text } : { role: 'assistant', content: m.text },
    ),
    { role: 'user', content: p.text },
  ];
  return { system, messages, tools: composed.tools };
}
