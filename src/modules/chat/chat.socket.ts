// The default namespace's chat events (contract: "Real time"). Authentication happened at
// connect (platform/realtime/socket-server.ts); here each event runs a turn and maps the turn's
// output to events: assistantThinking, assistantResponseDelta, assistantResponse, assistantIdle,
// npcThinking, directNpcResponse, and chatError with the problem, conversationId, clientMessageId.
import type { Server, Socket } from 'socket.io';
import type { Logger } from 'pino';
import type { ChatService } from './chat.service.js';
import type { SocketData } from '../../platform/realtime/socket-server.js';
import { ChatTurnError, type TurnEmitter } from './chat.service.js';

type Ack = (answer: unknown) => void;

function emitterFor(socket: Socket): TurnEmitter {
  return {
    thinking: (e) => socket.emit('assistantThinking', e),
    delta: (e) => socket.emit('assistantResponseDelta', e),
    response: (e) => socket.emit('assistantResponse', e),
    idle: (e) => socket.emit('assistantIdle', e),
    npcThinking: (e) => socket.emit('npcThinking', e),
    directResponse: (e) => socket.emit('directNpcResponse', e),
  };
}

export function chatSockets(io: Server, { chat, log }: { chat: ChatService; log: Logger }) {
  io.of('/').on('connection', (socket) => {
    const user = () => (socket.data as SocketData).user;
    const emit = emitterFor(socket);

    const run = (
      name: string,
      turn: (payload: unknown) => Promise<{ conversationId: number; messageId: number }>,
    ) =>
      socket.on(name, (payload: unknown, ack?: Ack) => {
        turn(payload).then(
          (ids) => {
            if (typeof ack === 'function') ack({ ok: true, ...ids });
          },
          (err: unknown) => {
            const problem =
              err instanceof ChatTurnError
                ? err.problem
                : {
                    type: '/problems/internal',
                    title: 'Internal server error',
                    status: 500,
                    detail: 'An unexpected error occurred',
                    code: 'internal',
                    conversationId: null,
                    clientMessageId: null,
                  };
            if (!(err instanceof ChatTurnError)) log.error({ err }, `${name} failed`);
            socket.emit('chatError', problem);
            if (typeof ack === 'function') ack({ ok: false, error: problem });
          },
        );
      });

    run('chatMessage', (payload) => chat.handleMessage(user(), payload, emit));
    run('directNpcMessage', (payload) => chat.handleDirectNpcMessage(user(), payload, emit));
  });
}
