// The population, made through the public API on both nodes at once (the service has no batch
// route for accounts, so those are single requests, many in flight): the first administrator
// signs in and makes an API key for the world platform, two observers (Level-8 instances) with
// five Level-5 instances each, the users (registered), a webhook per observer to the load
// generator's receiver, and a scheduled task (diary compliance, every minute) on the first
// observer. Each user's memories (a few hundred characters each, `memoryText`) are written in bulk
// afterwards by seed-memories.ts.
import { prng } from '../prng.js';
import { BENCH_EVENT, type Options } from './options.js';
import type { Balancer } from './balancer.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from './nodes.js';

export interface User {
  id: number;
  token: string;
}

export interface Population {
  adminToken: string;
  apiKey: string;
  observerIds: number[];
  /** Level-5 instances, with the observer each hangs from. */
  instances: { id: number; observerId: number }[];
  users: User[];
  seedSeconds: { users: number };
}

export const TOPICS = [
  'harbour',
  'lantern',
  'violin',
  'garden',
  'bridge',
  'winter',
  'market',
  'river',
  'forge',
  'library',
  'mountain',
  'orchard',
  'festival',
  'sailboat',
  'bakery',
  'lighthouse',
];
const PEOPLE = ['Ada', 'Bruno', 'Chiara', 'Dmitri', 'Esme', 'Farid', 'Greta', 'Hugo', 'Ines', 'Jonas'];
const VERBS = ['visited', 'painted', 'repaired', 'described', 'dreamt about', 'walked past', 'sold', 'found'];
const DETAILS = [
  'in the early morning before anyone else was awake',
  'with an old friend who had just come back from abroad',
  'while the rain kept falling on the tin roof',
  'and promised to come back when the season changes',
  'and wrote a long letter about it the same evening',
  'after a quarrel that neither of them remembers well',
];

/** Memory `i` of a user: sentences about topics, people and places, ~`chars` characters. */
export function memoryText(userId: number, i: number, chars: number): string {
  const rnd = prng(userId * 100_003 + i);
  const pick = <T>(a: readonly T[]) => a[Math.floor(rnd() * a.length)]!;
  let text = '';
  while (text.length < chars)
    text += `${pick(PEOPLE)} ${pick(VERBS)} the ${pick(TOPICS)} near the ${pick(TOPICS)} ${pick(DETAILS)}. `;
  return `${text.trim()} (note ${i})`;
}

/** Runs `fn` over `items`, `concurrency` at a time. */
export async function eachLimit<T>(items: T[], concurrency: number, fn: (x: T, i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) await fn(items[i]!, i);
    }),
  );
}

export async function seed(o: Options, lb: Balancer, say: (line: string) => void): Promise<Population> {
  const t0 = performance.now();
  const admin = await lb.must('seed.login', 'POST', '/api/auth/login', {
    body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD, clientType: 'api' },
  });
  const adminToken: string = admin.accessToken;
  const token = adminToken;
  const { key: apiKey } = await lb.must('seed.api-key', 'POST', '/api/admin/api-keys', {
    token,
    body: { name: 'system bench world platform', scopes: ['sync:write', 'sync:read'] },
  });
  const observerIds: number[] = [];
  const instances: Population['instances'] = [];
  for (let k = 0; k < 2; k++) {
    const observer = await lb.must('seed.instance', 'POST', '/api/admin/instances', {
      token,
      body: { name: `bench observer ${k}`, level: 8, source: 'portal' },
    });
    observerIds.push(observer.id);
    for (let j = 0; j < 5; j++) {
      const inst = await lb.must('seed.instance', 'POST', '/api/admin/instances', {
        token,
        body: {
          name: `bench shard ${k}.${j}`,
          level: 5,
          source: 'game_client',
          parentInstanceId: observer.id,
        },
      });
      instances.push({ id: inst.id, observerId: observer.id });
    }
  }

  const tag = Date.now().toString(36);
  const users: User[] = new Array<User>(o.users);
  await eachLimit([...users.keys()], o.seedConcurrency, async (_, u) => {
    const r = await lb.must('seed.register', 'POST', '/api/auth/register', {
      body: {
        email: `player-${u}-${tag}@system-bench.test`,
        password: 'a long bench password',
        name: `Player ${u}`,
      },
    });
    users[u] = { id: r.user.id, token: r.accessToken };
  });
  const usersAt = performance.now();
  say(`seed: ${o.users} users in ${((usersAt - t0) / 1000).toFixed(1)} s`);

  return {
    adminToken,
    apiKey,
    observerIds,
    instances,
    users,
    seedSeconds: { users: (usersAt - t0) / 1000 },
  };
}

/** What needs the receiver's address: a webhook per observer (the bench's event type, that
 * observer's events only), and the scheduled task. */
export async function seedHooks(
  p: Population,
  lb: Balancer,
  webhookUrl: string,
  webhooks: boolean,
): Promise<void> {
  for (const observerId of webhooks ? p.observerIds : [])
    await lb.must('seed.webhook', 'POST', '/api/admin/webhooks', {
      token: p.adminToken,
      body: { url: `${webhookUrl}/hook/${observerId}`, eventTypes: [BENCH_EVENT], observerId },
    });
  await lb.must('seed.scheduled-task', 'POST', '/api/admin/scheduled-tasks', {
    token: p.adminToken,
    body: {
      name: 'system bench diary compliance',
      kind: 'diary_compliance',
      cron: '* * * * *',
      payload: { observerId: p.observerIds[0] },
    },
  });
}
