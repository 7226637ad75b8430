// The chat test files' socket client: the shared one (test/socket-client.ts) seen through the
// chat event maps. Its socket is socket.io-client's Socket<ChatServerEvents, ChatClientEvents>,
// `send` takes a client event's payload type, and every event and ack a send receives is checked
// against its schema (chat.schemas.ts), so the declared payloads are the ones the server sends.
import type { Socket } from 'socket.io-client';
import type { z } from 'zod';
import { connectSocket, type TestApp, type TestSocket, type TestUser } from '../../../test/harness.js';
import { inventoryUpdateEvent } from '../inventory/index.js';
import type { ChatClientEvents, ChatServerEvents } from './chat.events.js';
import {
  assistantIdleEvent,
  assistantResponseDeltaEvent,
  assistantResponseEvent,
  assistantThinkingEvent,
  chatAckSchema,
  chatErrorEvent,
  directNpcResponseEvent,
  npcThinkingEvent,
} from './chat.schemas.js';

const serverEventSchemas = {
  assistantThinking: assistantThinkingEvent,
  assistantResponseDelta: assistantResponseDeltaEvent,
  assistantResponse: assistantResponseEvent,
  assistantIdle: assistantIdleEvent,
  npcThinking: npcThinkingEvent,
  directNpcResponse: directNpcResponseEvent,
  // A turn's chatError (the connection's token_expired, without ids, is not sent in a turn).
  chatError: chatErrorEvent,
} satisfies Record<keyof ChatServerEvents, unknown>;

/** The shared client's answer: the ack and the events received since the emit. */
type Sent = ReturnType<TestSocket['send']>;

export interface ChatTestSocket {
  socket: Socket<ChatServerEvents, ChatClientEvents>;
  /** Emits with an ack and waits for `until` (default assistantIdle) or a chatError. */
  send<E extends keyof ChatClientEvents>(
    event: E,
    payload: Parameters<ChatClientEvents[E]>[0],
    until?: keyof ChatServerEvents,
  ): Sent;
  /** Sends a payload outside the event's type (validation tests). */
  sendInvalid(event: keyof ChatClientEvents, payload: unknown): Sent;
}

function check(name: string, schema: z.ZodType, value: unknown) {
  const r = schema.safeParse(value);
  if (!r.success) throw new Error(`${name} does not match its schema: ${r.error.message}`);
}

async function checkedSend(sent: Sent): Sent {
  const r = await sent;
  check('the ack', chatAckSchema, r.ack);
  // The inventory module's inventoryUpdate shares the namespace (it follows a tool turn).
  const schemas: Partial<Record<string, z.ZodType>> = {
    ...serverEventSchemas,
    inventoryUpdate: inventoryUpdateEvent,
  };
  for (const e of r.events) {
    const schema = schemas[e.name];
    if (!schema) throw new Error(`unexpected event ${e.name}`);
    check(e.name, schema, e.payload);
  }
  return r;
}

/** A signed-in chat client of `app`. */
export async function chatClient(app: TestApp, user: TestUser): Promise<ChatTestSocket> {
  const c = await connectSocket(app.url, { auth: { token: user.accessToken } });
  return {
    socket: c.socket as unknown as Socket<ChatServerEvents, ChatClientEvents>,
    send: (event, payload, until) => checkedSend(c.send(event, payload, until)),
    sendInvalid: (event, payload) => checkedSend(c.send(event, payload)),
  };
}
