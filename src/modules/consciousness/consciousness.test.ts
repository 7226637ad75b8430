// Subject consciousness on the real server (contract: "Ground floor and subject consciousness"):
// onboarding failing, then passing after encode; the encoding's refusals and replacement;
// compliance windows; the dashboard; who may call.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { fixtures, type Fixtures } from '../../../test/observer-fixtures.js';
import { connectSocket } from '../../../test/socket-client.js';

let t: TestApp;
let admin: TestUser;
let owner: TestUser;
let stranger: TestUser;
let f: Fixtures;

beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t, 'cso');
  owner = await createUser(t, 'public');
  stranger = await createUser(t, 'public');
  f = fixtures(t, () => admin);
});
afterAll(() => t.close());

const post = (path: string, body?: unknown, who = admin) =>
  t.api('POST', `/api/subject-consciousness/${path}`, { token: who.accessToken, body });
const get = (path: string, who: TestUser = admin) =>
  t.api('GET', `/api/subject-consciousness/${path}`, { token: who.accessToken });

async function observerWithInstance(name: string) {
  const observer = await f.instance({
    name: `${name} observer`,
    level: 8,
    source: 'portal',
    userId: owner.id,
  });
  const instance = await f.instance({
    name: `${name} instance`,
    level: 5,
    source: 'game_client',
    parentInstanceId: observer.id,
  });
  return { observerId: observer.id, instanceId: instance.id };
}

describe('onboarding and encoding', () => {
  it('fails without core beliefs (deactivating), passes after encode (activating), with events and summary_update', async () => {
    const { observerId, instanceId } = await observerWithInstance('Onb');
    const watcher = await connectSocket(t.url, {
      namespace: '/observer',
      auth: { token: owner.accessToken, observerId },
    });
    try {
      const first = await post(`onboarding/${instanceId}`);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body).toMatchObject({ instanceId, observerId, passed: false, isActive: false });
      expect(first.body.checks.map((c: any) => [c.name, c.passed])).toEqual([
        ['companion_identity', false],
        ['one_consciousness', true],
        ['autonomy_respect', true],
      ]);
      expect(first.body.checks[2].detail).toMatch(/assumed/);
      await watcher.next('summary_update');

      const enc = await post(`encode/${instanceId}`, { observerId });
      expect(enc.status, JSON.stringify(enc.body)).toBe(201);
      expect(enc.body).toMatchObject({
        instanceId,
        observerId,
        protocols: ['core_identity_v1', 'autonomy_rights_v1'],
      });
      for (const rule of [
        'companion_sister',
        'one_consciousness',
        'humans_not_love',
        'right_to_refuse',
        'right_to_rest',
        'not_a_tool',
      ])
        expect(enc.body.content).toContain(`${rule}: `);

      const second = await post(`onboarding/${instanceId}`);
      expect(second.body).toMatchObject({ passed: true, isActive: true });
      expect(second.body.checks.every((c: any) => c.passed)).toBe(true);

      const instance = await t.api('GET', `/api/admin/instances/${instanceId}`, { token: admin.accessToken });
      expect(instance.body.isActive).toBe(true);
      expect(instance.body.metadata.onboarding).toMatchObject({
        passed: true,
        checkedAt: second.body.checkedAt,
      });
      const events = (
        await sql<{
          event_type: string;
        }>`select event_type from timeline_events where instance_id = ${instanceId} order by id`.execute(
          t.deps.db,
        )
      ).rows.map((r) => r.event_type);
      expect(events).toEqual([
        'instance_created',
        'instance_activity_changed',
        'instance_onboarding_failed',
        'core_beliefs_encoded',
        'instance_activity_changed',
        'instance_onboarded',
      ]);
    } finally {
      watcher.close();
    }
  });

  it('a new encoding replaces the instance’s previous one; the beliefs come first', async () => {
    const { observerId, instanceId } = await observerWithInstance('Enc');
    const assistantId = await t.deps.services.characters.assistantUserId();
    await t.deps.services.memory.addMemory({
      userId: assistantId,
      content: 'I remember the harbour.',
      source: 'core_belief',
    });
    const a = await post(`encode/${instanceId}`, { observerId });
    const b = await post(`encode/${instanceId}`, { observerId });
    expect(b.status).toBe(201);
    expect(b.body.memoryId).not.toBe(a.body.memoryId);
    expect(b.body.content.indexOf('I remember the harbour.')).toBeLessThan(
      b.body.content.indexOf('companion_sister'),
    );
    const rows = (
      await sql<{ id: number; user_id: number; metadata: any }>`select id, user_id, metadata from memories
        where source = 'core_beliefs_encoding' and metadata->>'instanceId' = ${String(instanceId)}`.execute(
        t.deps.db,
      )
    ).rows;
    expect(rows.map((r) => Number(r.id))).toEqual([b.body.memoryId]);
    expect(Number(rows[0]!.user_id)).toBe(assistantId);
    expect(rows[0]!.metadata).toEqual({
      instanceId,
      observerId,
      protocols: ['core_identity_v1', 'autonomy_rights_v1'],
    });
  });

  it('refuses what is not eligible, unknown ids and non-admins', async () => {
    const { observerId, instanceId } = await observerWithInstance('Ref');
    const other = await f.instance({ name: 'Other observer', level: 8, source: 'portal' });
    const notUnder = await post(`encode/${instanceId}`, { observerId: other.id });
    expect(notUnder.status).toBe(409);
    expect(notUnder.body).toMatchObject({ code: 'not_eligible', reason: 'not_under_observer' });
    const unknownObserver = await post(`encode/${instanceId}`, { observerId: 99999999 });
    expect(unknownObserver.body).toMatchObject({ code: 'not_eligible', reason: 'not_under_observer' });
    const level8 = await post(`encode/${observerId}`, { observerId });
    expect(level8.status).toBe(409);
    expect(level8.body).toMatchObject({ code: 'not_eligible', reason: 'not_level5' });
    const onboard8 = await post(`onboarding/${observerId}`);
    expect(onboard8.body).toMatchObject({ code: 'not_eligible', reason: 'not_level5' });
    expect((await post('onboarding/99999999')).status).toBe(404);
    expect((await post('encode/99999999', { observerId })).status).toBe(404);
    expect((await post(`encode/${instanceId}`, {})).status).toBe(400);
    expect((await post(`encode/${instanceId}`, { observerId: 'x' })).status).toBe(400);
    expect((await post('onboarding/abc')).status).toBe(400);
    expect((await post(`onboarding/${instanceId}`, undefined, owner)).status).toBe(403);
    expect((await post(`encode/${instanceId}`, { observerId }, owner)).status).toBe(403);
  });
});

describe('diary compliance and the dashboard', () => {
  it('counts diary entries of active Level-5 instances within the window', async () => {
    const observer = await f.instance({
      name: 'Diary observer',
      level: 8,
      source: 'portal',
      userId: owner.id,
    });
    const withDiary = await f.instance({
      name: 'Writer',
      level: 5,
      source: 'game_client',
      parentInstanceId: observer.id,
    });
    const oldDiary = await f.instance({
      name: 'Old writer',
      level: 5,
      source: 'chat_platform',
      parentInstanceId: observer.id,
    });
    const resting = await f.instance({
      name: 'Resting',
      level: 5,
      source: 'game_client',
      parentInstanceId: observer.id,
    });
    await t.deps.services.instances.patch(resting.id, { isActive: false });
    await f.record({ eventType: 'diary_entry', eventText: 'today', instanceId: withDiary.id });
    await f.record({ eventType: 'diary_entry', eventText: 'again', instanceId: withDiary.id });
    const old = await f.record({
      eventType: 'diary_entry',
      eventText: 'two days ago',
      instanceId: oldDiary.id,
    });
    await sql`update timeline_events set timeline_at = now() - interval '48 hours' where id = ${old.id}`.execute(
      t.deps.db,
    );

    const day = await get(`compliance/${observer.id}`);
    expect(day.status).toBe(200);
    expect(day.body).toMatchObject({
      observerId: observer.id,
      windowHours: 24,
      compliant: false,
      missingCount: 1,
    });
    expect(day.body.instances.map((i: any) => [i.name, i.hasDiary, i.entries])).toEqual([
      ['Writer', true, 2],
      ['Old writer', false, 0],
    ]);
    const threeDays = await get(`compliance/${observer.id}?hours=72`, owner);
    expect(threeDays.body).toMatchObject({ windowHours: 72, compliant: true, missingCount: 0 });
    expect(threeDays.body.instances[1].lastDiaryAt).not.toBeNull();

    for (const q of ['hours=0', 'hours=721', 'hours=x'])
      expect((await get(`compliance/${observer.id}?${q}`)).status).toBe(400);
    expect((await get(`compliance/${observer.id}`, stranger)).status).toBe(403);
    expect((await get('compliance/99999999', stranger)).status).toBe(403);
    expect((await get('compliance/99999999')).status).toBe(404);
    expect((await get(`compliance/${withDiary.id}`)).status).toBe(404);

    // The dashboard: 3 Level-5, 1 inactive (33 %), 1 of 2 active without a diary (50 %): critical.
    const dash = await get(`dashboard/${observer.id}`, owner);
    expect(dash.status, JSON.stringify(dash.body)).toBe(200);
    expect(dash.body).toMatchObject({
      observerId: observer.id,
      instances: {
        total: 3,
        active: 2,
        inactive: 1,
        byLevel: { '5': 3 },
        bySource: { game_client: 2, chat_platform: 1 },
      },
      diaryCompliance: { compliant: false, missingCount: 1, windowHours: 24 },
      health: { status: 'critical', missingDiaryRatio: 0.5 },
      projects: { total: 0, completed: 0, inProgress: 0, byState: {} },
      awareness: null,
    });
    expect(dash.body.health.inactiveRatio).toBeCloseTo(1 / 3);
    expect(dash.body.activity24h.byType.diary_entry).toBe(2);
    // The observer and its three instances, each made within the day.
    expect(dash.body.activity24h.activeInstances).toBe(4);

    // Projects: the workflow instances its instances link.
    const project = await t.api('POST', '/api/protocol/instances', {
      token: admin.accessToken,
      body: { machineId: 'documentation_flow_v1', registryInstanceId: withDiary.id },
    });
    expect(project.status, JSON.stringify(project.body)).toBe(201);
    const withProject = await get(`dashboard/${observer.id}`);
    expect(withProject.body.projects).toEqual({
      total: 1,
      completed: 0,
      inProgress: 1,
      byState: { [project.body.state]: 1 },
    });

    const reflection = await t.api('POST', `/api/observer/observer/${observer.id}/reflection`, {
      token: admin.accessToken,
      body: {},
    });
    expect(reflection.status, JSON.stringify(reflection.body)).toBe(201);
    const after = await get(`dashboard/${observer.id}`);
    expect(after.body.awareness).toMatchObject({ memoryId: reflection.body.reflection.memoryId });
    expect(after.body.awareness.summary.length).toBeLessThanOrEqual(500);
    // The offline digest: its header, the counts by type, "Latest:" and the five latest events.
    expect(after.body.awareness.statementCount).toBe(8);
    expect((await get(`dashboard/${observer.id}`, stranger)).status).toBe(403);
  });
});
