// Pure rules of a character's turn, table-tested in chat.characters.rules.test.ts: who is
// addressed in a scene, a character's card as its prompt opens, the earlier lines of a scene
// attributed to their speakers, and the retrieved memories labelled by whose they are.
import type { ChatMessage as ModelMessage } from '../../platform/models/provider.js';
import type { RetrievedMemory } from '../memory/index.js';
import type { Speaker } from './chat.types.js';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The speakers a message names (as a whole word, any case), in the order it names them: in a
 * scene, a character named or addressed answers ("Maela, what news from the road?"); none named,
 * the director picks among them all. */
export function addressedSpeakers(text: string, speakers: Speaker[]): Speaker[] {
  const found = speakers.flatMap((s) => {
    const name = s.name.trim();
    if (!name) return [];
    const at = new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRe(name)}(?=$|[^\\p{L}\\p{N}])`, 'iu').exec(text);
    return at ? [{ s, at: at.index }] : [];
  });
  return found.sort((a, b) => a.at - b.at).map((f) => f.s);
}

/** Who a character is, as its prompt opens: its name and description, then its card. */
export function cardSection(s: Speaker): string {
  const lines = [`You are ${s.name}.${s.description ? ` ${s.description}` : ''}`];
  const card = s.card;
  if (card?.personality) lines.push(`Personality: ${card.personality}`);
  if (card?.speakingStyle) lines.push(`How you speak: ${card.speakingStyle}`);
  if (card?.goals.length) lines.push(`What you want:\n${card.goals.map((g) => `- ${g}`).join('\n')}`);
  return lines.join('\n');
}

/** A scene's cast as the director reads it: each character's card, under its name and id. */
export function castSection(speakers: Speaker[]): string {
  return speakers
    .map((s) => {
      const card = cardSection(s).replace(/^You are [^\n]*\n?/, '');
      const head = `### ${s.name} (id ${s.id})${s.description ? `: ${s.description}` : ''}`;
      return card ? `${head}\n${card}` : head;
    })
    .join('\n\n');
}

/** An earlier message as the prompt's history reads it. */
export interface HistoryLine {
  id: number;
  role: 'user' | 'assistant';
  text: string;
  npc_user_id: number | null;
}

/** The earlier lines for the model. Only the current speaker's own lines go as `assistant`; in a
 * scene (a group turn, or history holding another character's lines) every line is a `user`
 * message that starts with its speaker's name ("Maela: …"), the current speaker's own excepted;
 * in a one-to-one thread the player's lines go as they are. */
export function attributedHistory(
  lines: HistoryLine[],
  p: {
    /** The current speaker; null for a group's director (no line is its own). */
    speakerId: number | null;
    playerName: string;
    /** Names of the characters who spoke, by id; `fallbackName` for an unnamed one. */
    names: ReadonlyMap<number, string>;
    fallbackName: string;
  },
): ModelMessage[] {
  const isOwn = (l: HistoryLine) =>
    l.role === 'assistant' && p.speakerId !== null && l.npc_user_id === p.speakerId;
  const scene = p.speakerId === null || lines.some((l) => l.role === 'assistant' && !isOwn(l));
  return lines.map((l): ModelMessage => {
    if (isOwn(l)) return { role: 'assistant', content: l.text };
    if (l.role === 'user') return { role: 'user', content: scene ? `${p.playerName}: ${l.text}` : l.text };
    const name = (l.npc_user_id !== null && p.names.get(l.npc_user_id)) || p.fallbackName;
    return { role: 'user', content: `${name}: ${l.text}` };
  });
}

/** The retrieved memories as the prompt's knowledge, each section saying whose they are. */
export function characterMemorySections(
  memories: RetrievedMemory[],
  p: { speakers: Speaker[]; playerUserId: number; playerName: string },
): string {
  const lines = (ms: RetrievedMemory[]) => ms.map((m) => `- ${m.content}`).join('\n');
  const sections: string[] = [];
  const world = memories.filter((m) => m.tier === 'world');
  if (world.length) sections.push(`World knowledge (shared by everyone):\n${lines(world)}`);
  for (const s of p.speakers) {
    const own = memories.filter((m) => m.userId === s.id && m.tier === 'assistant_core');
    if (own.length) sections.push(`What ${s.name} knows (${s.name}'s own memories):\n${lines(own)}`);
  }
  const player = memories.filter((m) => m.userId === p.playerUserId && m.tier !== 'world');
  const who = p.speakers.length === 1 ? p.speakers[0]!.name : p.speakers.map((s) => s.name).join(' and ');
  if (player.length)
    sections.push(
      `What ${who} ${p.speakers.length === 1 ? 'has' : 'have'} heard from ${p.playerName}:\n${lines(player)}`,
    );
  return sections.join('\n\n');
}
