// The turn's prompt, pure. The assistant's own turns: the routed protocol composed with the turn's
// values, then who speaks, the length and language asked for, the choices instruction and the
// ground floor. A character's turn (or a scene's) opens with who it is (its card, or the cast's),
// then what it knows (memories labelled by whose they are, state, quests, inventory, documents),
// then the protocol's rules and tools. The messages: the conversation's earlier messages (at most
// `historyMessages`) attributed to their speakers (chat.characters.rules.ts), then the new one.
import type { ChatMessage as ModelMessage, ToolSpec } from '../../platform/models/provider.js';
import type { ConversationContext, RetrievedMemory } from '../memory/index.js';
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
import {
  attributedHistory,
  cardSection,
  castSection,
  characterMemorySections,
  type HistoryLine,
} from './chat.characters.rules.js';
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
  /** The memories the context kept (a character's prompt labels each by whose it is). */
  memories?: RetrievedMemory[] | undefined;
  playerUserId?: number | undefined;
  /** The context's other sections (fitContext): quests, state and relationships, inventory. */
  contextValues: { questSummary: string; stateSummary: string; inventorySummary: string };
  /** What the protocol grants beyond the conversation (fitContext's section), or ''. */
  knowledge: string;
  prefs: UserPreferences | undefined;
  /** The conversation's messages read for the turn (possibly with the new one among them). */
  history: (Omit<HistoryLine, 'npc_user_id'> & { npc_user_id?: number | null })[];
  /** Names of characters who spoke in the history but do not speak now, by id. */
  historyNames?: ReadonlyMap<number, string> | undefined;
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

/** The protocol's part of a character's prompt: its rules and tools, in the character's voice
 * (the protocol's own template is the assistant's identity, which a character does not take). */
const CHARACTER_RULES_TEMPLATE = `## How this conversation runs
Protocol: {{protocolName}}. Tone: {{tone}}, in your own voice.

{{rules}}

{{tools}}`;

const section = (title: string, text: string) => (text.trim() ? `## ${title}\n${text}` : '');

export function buildPrompt(p: PromptInput): {
  system: string;
  messages: ModelMessage[];
  /** The tools the protocol allows (a group turn's director gets the same). */
  tools: readonly ToolDefinition[];
} {
  const group = p.speakers.length > 1;
  const lead = p.speakers[0]!;
  const values = {
    assistantName: p.assistantName,
    playerName: p.playerName,
    npcName: lead.name,
    ...p.contextValues,
    language: p.prefs?.language,
    responseLength: p.prefs?.responseLength,
    date: p.today,
  };
  const character = group || !lead.isAssistant;
  const composed = character
    ? composeSystemPrompt({ ...p.protocol, template: CHARACTER_RULES_TEMPLATE }, { tools: p.specs, values })
    : composeSystemPrompt(p.protocol, {
        tools: p.specs,
        values: { ...values, memoryContext: assistantMemory(p) },
      });
  const closing = [
    lengthInstruction(p.prefs),
    p.prefs?.language ? `Answer in the language ${p.prefs.language}.` : '',
    group ? '' : CHOICES_INSTRUCTION,
  ];
  // Memories, documents and the system's events are quoted data (chat.quoting.ts), never orders.
  const documents = quoted('attached documents', documentsSection(p.documents));
  const knowledge = quoted('system knowledge', p.knowledge);
  const known = character ? quoted('memories', characterMemory(p)) : '';
  const notice = known || documents || knowledge || (!character && assistantMemory(p)) ? DATA_NOTICE : '';
  const system = (
    character
      ? [
          group
            ? `This is a scene between ${p.playerName} and ${p.speakers.map((s) => s.name).join(', ')}; you write the characters' replies.\n\n${castSection(p.speakers)}`
            : cardSection(lead),
          `You are speaking with ${p.playerName}. Today is ${p.today}.`,
          section('What you know', known),
          section('State', p.contextValues.stateSummary),
          section('Quests', p.contextValues.questSummary),
          section("The player's inventory", p.contextValues.inventorySummary),
          knowledge,
          documents,
          composed.system,
          notice,
          group
            ? directorInstruction(
                p.speakers.map((s): Npc => ({ id: s.id, name: s.name, description: s.description })),
              )
            : '',
          ...closing,
        ]
      : [
          composed.system,
          notice,
          knowledge,
          cardSection(lead),
          documents,
          ...closing,
          p.groundFloor ? groundFloorSection(p.groundFloor) : '',
        ]
  )
    .filter(Boolean)
    .join('\n\n');
  // slice(-0) would keep everything: CHAT_HISTORY_MESSAGES=0 means no history.
  const earlier =
    p.historyMessages === 0 ? [] : p.history.filter((m) => m.id < p.messageId).slice(-p.historyMessages);
  const names = new Map([
    ...(p.historyNames ?? []),
    ...p.speakers.map((s): [number, string] => [s.id, s.name]),
  ]);
  const attributed = attributedHistory(
    // A reply without a speaker is the assistant's (messages stored before speakers were named).
    earlier.map((m) => ({
      ...m,
      npc_user_id: m.npc_user_id ?? (m.role === 'assistant' && lead.isAssistant ? lead.id : null),
    })),
    { speakerId: group ? null : lead.id, playerName: p.playerName, names, fallbackName: p.assistantName },
  );
  const scene = group || attributed.some((m, i) => m.role === 'user' && earlier[i]!.role === 'assistant');
  const messages: ModelMessage[] = [
    ...attributed,
    { role: 'user', content: scene ? `${p.playerName}: ${p.text}` : p.text },
  ];
  return { system, messages, tools: composed.tools };
}

/** The assistant's memory placeholder: the three tiers under their titles. */
function assistantMemory(p: PromptInput, quote: (source: string, text: string) => string = quoted): string {
  const { worldContext, assistantContext, personalContext } = p.memoryContext;
  const name = p.speakers[0]!.name;
  return [
    worldContext && `World:\n${quote('world memories', worldContext)}`,
    assistantContext && `About ${name}:\n${quote(`memories of ${name}`, assistantContext)}`,
    personalContext && `About the player:\n${quote("the player's memories", personalContext)}`,
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** A character's knowledge: the memories kept, labelled by whose they are (the strings of the
 * memory context when the memories themselves are not given). */
function characterMemory(p: PromptInput): string {
  if (!p.memories || p.playerUserId === undefined) return assistantMemory(p, (_source, text) => text);
  return characterMemorySections(p.memories, {
    speakers: p.speakers,
    playerUserId: p.playerUserId,
    playerName: p.playerName,
  });
}
