// What the bench asks of a code's service, as its clients do: the population (bench/system's
// seed, through the public API: an administrator's API key for the world platform, observers with
// their instances, users) and each user's memories (POST /api/assistant/memory, one by one, each
// embedded by the service's job); then the three operations it measures:
//   chat: a chat turn over Socket.IO (chatMessage, answered by its ack once the replies went out
//     and the exchange was stored), one socket per user, each turn after the previous one's ack;
//   ingest: a timeline event through POST /api/sync/ingest-event, for an instance of the watched
//     observer, which every /observer socket (and the webhook, when there is one) receives;
//   search: a memory search, GET /api/assistant/memory?query=…
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { io, type Socket } from 'socket.io-client';
import { Balancer } from '../system/balancer.js';
import { readBody } from '../system/body.js';
import { eachLimit, memoryText, seed, TOPICS, type Population } from '../system/seed.js';
import { Stats } from '../system/stats.js';
import type { Options as SystemOptions } from '../system/options.js';

export const EVENT_TYPE = 'whole_cost_bench';
export type Kind = 'chat' | 'ingest' | 'search';

/** The clients of one code: its balancer (requests to its nodes in turn), its population and the
 * sockets, which stay connected for the whole run as real clients do. */
export class Clients {
  readonly stats = new Stats(performance.now());
  readonly lb: Balancer;
  pop!: Population;
  private chat: Socket[] = [];
  private observers: Socket[] = [];
  private delivered = 0;
  private hooked = 0;
  private receiver: Server | undefined;
  private n = 0;

  constructor(readonly urls: string[]) {
    this.lb = new Balancer(urls, this.stats);
  }

  /** Users, observers, the API key; `memories` for each user, `concurrency` requests at a time. */
  async seed(users: number, memories: number, concurrency: number, say: (l: string) => void) {
    this.pop = await seed({ users, seedConcurrency: concurrency } as SystemOptions, this.lb, say);
    const writes = this.pop.users.flatMap((u) => Array.from({ length: memories }, (_, i) => ({ u, i })));
    await eachLimit(writes, concurrency, async ({ u, i }) => {
      await this.lb.must('seed.memory', 'POST', '/api/assistant/memory', {
        token: u.token,
        expect: 201,
        body: { content: memoryText(u.id, i, 300), source: 'shared' },
      });
    });
  }

  /** The sockets: `chat` chat clients (a user each) and `observers` /observer sockets on the
   * first observer, spread over the nodes; with `webhook`, a webhook on that observer to a
   * receiver here. */
  async connect(chat: number, observers: number, webhook: boolean) {
    const open = (s: Socket) =>
      new Promise<Socket>((ok, fail) => {
        s.once('connect', () => ok(s));
        s.once('connect_error', fail);
      });
    const options = { transports: ['websocket'], reconnection: false, forceNew: true };
    for (let k = 0; k < chat; k++) {
      const user = this.pop.users[k % this.pop.users.length]!;
      this.chat.push(
        await open(io(this.urls[k % this.urls.length], { ...options, auth: { token: user.token } })),
      );
    }
    const observerId = this.pop.observerIds[0]!;
    for (let k = 0; k < observers; k++) {
      const s = io(`${this.urls[k % this.urls.length]}/observer`, {
        ...options,
        auth: { token: this.pop.adminToken, observerId },
      });
      s.on('timeline_update', (e: { eventType?: string }) => {
        if (e?.eventType === EVENT_TYPE) this.delivered++;
      });
      this.observers.push(await open(s));
    }
    if (!webhook) return;
    this.receiver = createServer((req, res) => {
      void readBody(req).then((raw) => {
        res.writeHead(204).end();
        if ((JSON.parse(raw) as { data?: { eventType?: string } }).data?.eventType === EVENT_TYPE)
          this.hooked++;
      });
    });
    await new Promise<void>((ok) => this.receiver!.listen(0, '127.0.0.1', ok));
    await this.lb.must('seed.webhook', 'POST', '/api/admin/webhooks', {
      token: this.pop.adminToken,
      body: {
        url: `http://127.0.0.1:${(this.receiver.address() as AddressInfo).port}/hook`,
        eventTypes: [EVENT_TYPE],
        observerId,
      },
    });
  }

  get deliveriesPerIngest() {
    return this.observers.length + (this.receiver ? 1 : 0);
  }

  /** One chat turn on socket `s`; whether its ack said ok. */
  private turn(s: Socket): Promise<boolean> {
    const a = TOPICS[this.n++ % TOPICS.length]!;
    const b = TOPICS[(this.n * 7) % TOPICS.length]!;
    return new Promise((ok) => {
      const timer = setTimeout(() => ok(false), 120_000);
      s.emit(
        'chatMessage',
        { message: `What do you remember about the ${a} and the ${b}?`, clientMessageId: randomUUID() },
        (ack: { ok?: boolean }) => {
          clearTimeout(timer);
          ok(ack?.ok === true);
        },
      );
    });
  }

  /** `k` operations of `kind`, `concurrency` at a time (chat: one at a time per socket); for an
   * ingest, until every delivery arrived. The operations that failed (and deliveries missing). */
  async run(kind: Kind, k: number, concurrency: number): Promise<{ failed: number; missing: number }> {
    let failed = 0;
    const count = (ok: unknown) => void (ok ? undefined : failed++);
    if (kind === 'chat') {
      let next = 0;
      await Promise.all(
        this.chat.map(async (s) => {
          while (next++ < k) count(await this.turn(s));
        }),
      );
      return { failed, missing: 0 };
    }
    const ops = Array.from({ length: k }, (_, i) => i);
    if (kind === 'search') {
      await eachLimit(ops, concurrency, async () => {
        const u = this.pop.users[this.n++ % this.pop.users.length]!;
        const query = `the ${TOPICS[this.n % TOPICS.length]} and the ${TOPICS[(this.n * 5) % TOPICS.length]}`;
        count(
          await this.lb.request(
            'search',
            'GET',
            `/api/assistant/memory?${new URLSearchParams({ query, limit: '10' })}`,
            {
              token: u.token,
            },
          ),
        );
      });
      return { failed, missing: 0 };
    }
    const observerId = this.pop.observerIds[0]!;
    const instances = this.pop.instances.filter((i) => i.observerId === observerId);
    const [sockets0, hooks0] = [this.delivered, this.hooked];
    await eachLimit(ops, concurrency, async () => {
      const n = this.n++;
      count(
        await this.lb.request('ingest', 'POST', '/api/sync/ingest-event', {
          apiKey: this.pop.apiKey,
          expect: 201,
          body: {
            userId: this.pop.users[n % this.pop.users.length]!.id,
            eventType: EVENT_TYPE,
            eventText: `bench event ${n} at the ${TOPICS[n % TOPICS.length]}`,
            metadata: { instanceId: instances[n % instances.length]!.id },
          },
        }),
      );
    });
    const expected = () =>
      (k - failed) * this.observers.length -
      (this.delivered - sockets0) +
      (this.receiver ? k - failed - (this.hooked - hooks0) : 0);
    // Every socket and the webhook receive each event (a signal, not a sleep: polled until all
    // arrived, or a minute passed).
    for (let waited = 0; expected() > 0 && waited < 60_000; waited += 20)
      await new Promise((r) => setTimeout(r, 20));
    return { failed, missing: expected() };
  }

  close() {
    for (const s of [...this.chat, ...this.observers]) s.close();
    this.receiver?.closeAllConnections();
    this.receiver?.close();
  }
}
