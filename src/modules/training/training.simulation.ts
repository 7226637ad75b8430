// A simulated conversation between characters (contract: "Training (admin)", simulation): one
// structured model call writes every turn, each speaker introduced by its card and its own
// memories of the topic; offline, the characters speak in turn from the
// initiator, each line the speaker's offline answer to the topic from their own memories. The
// turns are stored as assistant messages of the caller's conversation (the conversations module
// owns messages), all in one transaction after the model answered: a failed call stores nothing.
import { randomUUID } from 'node:crypto';
import { transaction } from '../../platform/db/database.js';
import { AppError } from '../../platform/http/problem.js';
import {
  parseSimulation,
  roundRobin,
  simulationPrompt,
  type Persona,
  type SimulatedTurn,
} from './training.rules.js';
import type { TrainingDeps } from './training.types.js';

export interface SimulationInput {
  conversationId?: number | undefined;
  initiatorId: number;
  topic: string;
  turns: number;
  participantIds: number[];
}

/** Memories a speaker draws an offline line from. */
const OFFLINE_MEMORIES = 8;

/** A speaker's own memories bearing on the topic (its core tier and the world's). */
function memoriesOf(d: TrainingDeps, speaker: Persona, topic: string) {
  return d.memory.retrieve({ userId: speaker.id, npcUserId: speaker.id }, topic, OFFLINE_MEMORIES);
}

async function modelTurns(
  d: TrainingDeps,
  input: SimulationInput,
  cast: Persona[],
): Promise<SimulatedTurn[]> {
  // Each speaker is grounded in what it was trained on, as offline.
  const knowledge = new Map<number, string[]>();
  for (const speaker of cast)
    knowledge.set(
      speaker.id,
      (await memoriesOf(d, speaker, input.topic)).map((m) => m.content),
    );
  const p = simulationPrompt(cast, input.initiatorId, input.topic, input.turns, knowledge);
  const r = await d.models.chat({
    purpose: 'training.simulation',
    system: p.system,
    messages: [{ role: 'user', content: p.user }],
    temperature: 0.8,
  });
  const turns = parseSimulation(r.text, input.participantIds, input.initiatorId, input.turns);
  if (!turns)
    throw new AppError('model_unavailable', 'The model did not answer with the turns of the conversation');
  return turns;
}

async function offlineTurns(
  d: TrainingDeps,
  input: SimulationInput,
  cast: Persona[],
): Promise<SimulatedTurn[]> {
  const lines = new Map<number, string>();
  for (const speaker of cast) {
    const memories = await memoriesOf(d, speaker, input.topic);
    const r = await d.models.chat({
      purpose: 'training.simulation',
      messages: [{ role: 'user', content: `Say what you know about this: ${input.topic}` }],
      grounding: {
        memories: memories.map((m) => ({ content: m.content, createdAt: m.createdAt.toISOString() })),
        tone: 'PUBLIC',
        speakerName: speaker.name,
      },
    });
    lines.set(speaker.id, r.text);
  }
  return roundRobin(input.initiatorId, input.participantIds, input.turns).map((id) => ({
    npcUserId: id,
    text: lines.get(id)!,
  }));
}

export async function simulate(d: TrainingDeps, callerId: number, input: SimulationInput, cast: Persona[]) {
  // A named conversation must be the caller's (404) before anything is asked of the model.
  if (input.conversationId !== undefined) await d.conversations.resolve(callerId, input.conversationId);
  const offline = d.models.offline;
  const turns = offline ? await offlineTurns(d, input, cast) : await modelTurns(d, input, cast);
  const simulationId = randomUUID();
  const { conversationId, rows } = await transaction(d.db, async ({ trx }) => {
    const conversation =
      input.conversationId !== undefined
        ? await d.conversations.resolve(callerId, input.conversationId, trx)
        : await d.conversations.create(
            callerId,
            {
              title: [...`Simulation: ${input.topic}`].slice(0, 200).join(''),
              npcUserIds: input.participantIds,
            },
            trx,
          );
    const stored = await d.conversations.appendAssistantMessages(
      trx,
      conversation.id,
      callerId,
      turns.map((t, index) => ({ npcUserId: t.npcUserId, text: t.text, metadata: { simulationId, index } })),
    );
    return { conversationId: conversation.id, rows: stored };
  });
  const names = new Map(cast.map((c) => [c.id, c.name]));
  return {
    simulationId,
    conversationId,
    topic: input.topic,
    turns: rows.map((m, index) => ({
      index,
      npcUserId: m.npc_user_id!,
      npcName: names.get(m.npc_user_id!) ?? '',
      messageId: m.id,
      text: m.text,
      createdAt: m.created_at.toISOString(),
    })),
    offline,
  };
}
