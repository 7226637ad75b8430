// The chat clients: socket.io-client sockets spread over the nodes, each sending a turn every
// [min, max] seconds (divided by the load), replies streamed. Timed: the turn (chatMessage sent →
// its ack, which the service sends after the last reply and the exchange's memory) and the first
// streamed delta. A socket whose node goes away connects to another (a balancer's choice); a turn
// it lost is sent again there with the same clientMessageId (the service answers a repeated id
// from what it stored, or runs a failed one again), as a client resends an unanswered message.
import { randomUUID } from 'node:crypto';
import { io, type Socket } from 'socket.io-client';
import type { Balancer } from './balancer.js';
import { prng } from '../prng.js';
import { TOPICS, type User } from './seed.js';
import type { Stats } from './stats.js';

interface Pending {
  clientMessageId: string;
  message: string;
  sentAt: number;
  firstDelta: number | undefined;
  done: (ok: boolean, what: string) => void;
}

/** A socket's move to another node: when it lost its node, was admitted by another, and had a
 * turn answered there. */
export interface Switch {
  lostAt: number;
  connectedAt: number | undefined;
  servedAt: number | undefined;
}

export class ChatClient {
  socket: Socket | undefined;
  node = 0;
  private pending: Pending | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private n = 0;
  readonly switches: Switch[] = [];

  constructor(
    private readonly user: User,
    private readonly lb: Balancer,
    private readonly stats: Stats,
    private readonly interval: () => number,
    private readonly seedNo: number,
  ) {}

  /** Connects to node `node`; rejects on connect_error. */
  connect(node: number): Promise<void> {
    const s = io(this.lb.urls[node], {
      auth: { token: this.user.token },
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      // A handshake an overloaded node does not answer is given up and tried again.
      timeout: 10_000,
    });
    return new Promise((ok, fail) => {
      s.once('connect', () => {
        this.socket = s;
        this.node = node;
        s.on('assistantResponseDelta', () => {
          if (this.pending && this.pending.firstDelta === undefined)
            this.pending.firstDelta = performance.now();
        });
        s.on('chatError', (p: { code?: string }) => this.pending?.done(false, `chatError ${p?.code ?? ''}`));
        s.on('disconnect', (reason) => {
          if (this.stopped || reason === 'io client disconnect') return;
          void this.reconnect();
        });
        ok();
      });
      s.once('connect_error', (err) => {
        s.close();
        fail(err);
      });
    });
  }

  private async reconnect() {
    const lost: Switch = { lostAt: performance.now(), connectedAt: undefined, servedAt: undefined };
    this.switches.push(lost);
    this.lb.markDown(this.node);
    this.socket = undefined;
    const retry = this.pending;
    this.pending = undefined;
    retry?.done(false, 'disconnected');
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        await this.connect(this.lb.pick());
        lost.connectedAt = performance.now();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    // The lost turn again, under its id; served on the other node once answered (without one,
    // the next turn of the loop says it).
    if (retry && (await this.turn(retry.message, retry.clientMessageId, 'chat.resend')))
      lost.servedAt = performance.now();
  }

  start(firstDelayMs: number) {
    this.timer = setTimeout(() => void this.loop(), firstDelayMs);
  }

  private async loop() {
    if (this.stopped) return;
    if (this.socket && !this.pending) {
      const rnd = prng(this.seedNo * 7919 + this.n++);
      const topic = TOPICS[Math.floor(rnd() * TOPICS.length)]!;
      const other = TOPICS[Math.floor(rnd() * TOPICS.length)]!;
      const message = `What do you remember about the ${topic} and the ${other}?`;
      const ok = await this.turn(message, randomUUID(), 'chat.turn');
      const last = this.switches.at(-1);
      if (ok && last && last.servedAt === undefined) last.servedAt = performance.now();
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.loop(), this.interval());
  }

  /** One turn; true when it was answered. */
  private turn(message: string, clientMessageId: string, op: string): Promise<boolean> {
    const s = this.socket;
    if (!s) return Promise.resolve(false);
    return new Promise((resolve) => {
      const sentAt = performance.now();
      const timeout = setTimeout(() => p.done(false, 'timeout'), 120_000);
      const p: Pending = {
        clientMessageId,
        message,
        sentAt,
        firstDelta: undefined,
        done: (ok, what) => {
          if (this.pending !== p) return;
          this.pending = undefined;
          clearTimeout(timeout);
          if (ok) {
            this.stats.ok(op, performance.now() - sentAt);
            if (p.firstDelta !== undefined) this.stats.ok('chat.first-delta', p.firstDelta - sentAt);
          } else this.stats.error(op, what);
          resolve(ok);
        },
      };
      this.pending = p;
      s.emit(
        'chatMessage',
        { message, clientMessageId },
        (ack: { ok?: boolean; error?: { code?: string } }) =>
          p.done(ack?.ok === true, `ack ${ack?.error?.code ?? 'not ok'}`),
      );
    });
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.socket?.close();
  }
}

/** `n` clients over `users`, connected alternately to each node, `concurrency` at a time. */
export async function connectChatClients(
  n: number,
  users: User[],
  lb: Balancer,
  stats: Stats,
  interval: () => number,
): Promise<ChatClient[]> {
  const clients = Array.from(
    { length: n },
    (_, k) => new ChatClient(users[k % users.length]!, lb, stats, interval, k),
  );
  for (let k = 0; k < clients.length; k += 20)
    await Promise.all(clients.slice(k, k + 20).map((c, j) => c.connect((k + j) % lb.urls.length)));
  return clients;
}
