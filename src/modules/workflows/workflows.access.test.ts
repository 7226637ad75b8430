// Who may see and write a workflow instance (contract "Workflows", "Instances"): participants (the
// creator, admins, the owner of the instance's observer) write; approvals need an admin or that
// owner (other participants 403); everyone else gets 404. Lists: newest first, filtered, paged,
// non-admins' own. A linked registry instance routes the events to its observer's room.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
import { client, expectProblem } from './workflows.fixtures.js';

let t: TestApp;
let admin: TestUser;
let creator: TestUser;
let owner: TestUser;
let stranger: TestUser;
let c: ReturnType<typeof client>;

beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t, 'cso');
  creator = await createUser(t, 'public');
  owner = await createUser(t, 'public');
  stranger = await createUser(t, 'public');
  c = client(t);
});
afterAll(async () => {
  closeSockets();
  await t.close();
});

async function registry(body: Record<string, unknown>): Promise<{ id: number }> {
  const r = await t.api('POST', '/api/admin/instances', { token: admin.accessToken, body });
  expect(r.status, r.text).toBe(201);
  return r.body;
}

describe('an instance of a user', () => {
  it('is the creator’s to read and write, an admin’s to approve, and 404 to anyone else', async () => {
    const i = await c.create(creator, { machineId: 'documentation_flow_v1' });
    const db = t.deps.db;
    const [task] = await t.deps.services.workflowTasks.createTasks(db, i.id, [{ title: 'write docs' }]);
    const art = await t.deps.services.workflowTasks.createDraftArtifact(db, {
      instanceId: i.id,
      taskId: task!.id,
      personaId: null,
      summary: 'draft',
    });
    await t.deps.services.workflowTasks.markArtifactReady(db, art.id, 'text');

    const reads = [
      `/api/protocol/instances/${i.id}`,
      `/api/protocol/instances/${i.id}/approvals`,
      `/api/protocol/instances/${i.id}/timeline`,
      `/api/protocol/instances/${i.id}/tasks`,
      `/api/protocol/instances/${i.id}/artifacts`,
      `/api/protocol/artifacts/${art.id}`,
    ];
    for (const path of reads) {
      expect((await c.call(creator, 'GET', path)).status, path).toBe(200);
      expect((await c.call(admin, 'GET', path)).status, path).toBe(200);
      expectProblem(await c.call(stranger, 'GET', path), 404, 'not_found');
    }
    const writes: [string, string, unknown][] = [
      ['POST', `/api/protocol/instances/${i.id}/transition`, { targetState: 'triage' }],
      ['POST', `/api/protocol/instances/${i.id}/approvals`, {}],
      [
        'POST',
        `/api/protocol/instances/${i.id}/evidence`,
        { description: 'd', proofUrl: 'https://e.invalid/' },
      ],
      ['PUT', `/api/protocol/tasks/${task!.id}`, { status: 'in_progress' }],
      ['POST', `/api/protocol/tasks/${task!.id}/rerun`, undefined],
      ['POST', `/api/protocol/artifacts/${art.id}/review`, { approve: true }],
    ];
    for (const [method, path, body] of writes)
      expectProblem(await c.call(stranger, method, path, body), 404, 'not_found');
    // Nothing the stranger tried changed anything.
    expect((await c.get(creator, i.id)).body).toMatchObject({ version: 1, state: 'intake' });
    expect((await c.call(creator, 'GET', `/api/protocol/artifacts/${art.id}`)).body.reviewStatus).toBe(
      'pending',
    );

    // The creator writes, but approving needs an approver.
    expect((await c.transition(creator, i.id, 'triage')).status).toBe(200);
    expectProblem(await c.approve(creator, i.id), 403, 'forbidden');
    expect((await c.approve(admin, i.id)).status).toBe(201);
    expect((await put(creator, task!.id, { status: 'in_progress' })).status).toBe(200);
    expect(
      (await c.call(creator, 'POST', `/api/protocol/artifacts/${art.id}/review`, { approve: true })).status,
    ).toBe(200);
  });
});

const put = (user: TestUser, taskId: string, body: Record<string, unknown>) =>
  c.call(user, 'PUT', `/api/protocol/tasks/${taskId}`, body);

describe('an instance linked to a registry instance', () => {
  it('makes the owner of its observer an approver, and its events reach that observer', async () => {
    const obs = await registry({ name: 'Owner obs', level: 8, source: 'portal', userId: owner.id });
    const leaf = await registry({
      name: 'Leaf',
      level: 5,
      source: 'state_machine',
      parentInstanceId: obs.id,
    });
    expectProblem(
      await c.call(creator, 'POST', '/api/protocol/instances', {
        machineId: 'triage_flow_v1',
        registryInstanceId: leaf.id,
      }),
      403,
      'forbidden',
    );
    expectProblem(
      await c.call(admin, 'POST', '/api/protocol/instances', {
        machineId: 'triage_flow_v1',
        registryInstanceId: 99_999_999,
      }),
      400,
      'validation_failed',
    );
    const watcher = await connectSocket(t.url, {
      namespace: '/observer',
      auth: { token: owner.accessToken, observerId: obs.id },
    });
    const i = await c.create(admin, { machineId: 'triage_flow_v1', registryInstanceId: leaf.id });
    expect(i.registryInstanceId).toBe(leaf.id);
    const linked = await t.api('GET', `/api/admin/instances/${leaf.id}`, { token: admin.accessToken });
    expect(linked.body.stateMachineInstanceId).toBe(i.id);
    const created = await watcher.next('timeline_update', {
      match: (e) => e.eventType === 'workflow_instance_created' && e.metadata.stateMachineInstanceId === i.id,
    });
    expect(created.payload).toMatchObject({
      instanceId: leaf.id,
      observerId: obs.id,
      source: 'state_machine',
    });

    // The owner is a participant and an approver; a stranger is neither.
    expect((await c.get(owner, i.id)).status).toBe(200);
    expect((await c.transition(owner, i.id, 'tooling_analysis')).status).toBe(200);
    const approved = await c.approve(owner, i.id, { note: 'go' });
    expect(approved.status, approved.text).toBe(201);
    expect(approved.body.approval).toMatchObject({ approvedByUserId: owner.id, note: 'go' });
    expect(approved.body.instance.state).toBe('execution_fix');
    expectProblem(await c.get(stranger, i.id), 404, 'not_found');
    expectProblem(await c.approve(stranger, i.id), 404, 'not_found');
    await watcher.next('timeline_update', {
      match: (e) =>
        e.eventType === 'workflow_execution_started' && e.metadata.stateMachineInstanceId === i.id,
    });
    watcher.close();
  });
});

describe('listing', () => {
  it('is newest first, filtered, paged, and a non-admin’s own', async () => {
    const lister = await createUser(t, 'public');
    const a = await c.create(lister, { machineId: 'documentation_flow_v1', channelId: 'list-chan' });
    const b = await c.create(lister, { machineId: 'triage_flow_v1' });
    const d = await c.create(lister, { machineId: 'documentation_flow_v1' });
    await c.transition(lister, d.id, 'triage');
    const other = await c.create(stranger, { machineId: 'documentation_flow_v1' });

    const list = async (user: TestUser, q = '') => {
      const r = await c.call(user, 'GET', `/api/protocol/instances${q}`);
      expect(r.status, r.text).toBe(200);
      return r.body;
    };
    const mine = await list(lister);
    expect(mine).toMatchObject({ total: 3, limit: 50, offset: 0 });
    expect(mine.instances.map((x: any) => x.id)).toEqual([d.id, b.id, a.id]);
    expect((await list(lister, '?machineId=documentation_flow_v1')).instances.map((x: any) => x.id)).toEqual([
      d.id,
      a.id,
    ]);
    expect((await list(lister, '?state=triage')).instances.map((x: any) => x.id)).toEqual([d.id]);
    expect((await list(lister, '?channelId=list-chan')).instances.map((x: any) => x.id)).toEqual([a.id]);
    expect((await list(lister, '?archived=true')).total).toBe(0);
    expect((await list(lister, '?archived=false')).total).toBe(3);
    const page = await list(lister, '?limit=1&offset=1');
    expect(page).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.instances.map((x: any) => x.id)).toEqual([b.id]);
    expect(page.instances[0].allowedTransitions).toEqual([
      { to: 'tooling_analysis', guard: null, satisfied: true, missing: [] },
    ]);
    const all = await list(admin, '?limit=200');
    expect(all.instances.map((x: any) => x.id)).toEqual(expect.arrayContaining([a.id, b.id, d.id, other.id]));
    for (const q of ['?limit=0', '?limit=201', '?offset=-1', '?archived=maybe'])
      expectProblem(await c.call(lister, 'GET', `/api/protocol/instances${q}`), 400, 'validation_failed');
  });
});

describe('the overview (what the suggestions read of an instance)', () => {
  it('answers a read handed back as it answers the id, with the same access rules', async () => {
    const { workflows, workflowTasks } = t.deps.services;
    const actor = (u: TestUser, isAdmin = false) => ({ id: u.id, name: 'x', admin: isAdmin });
    const i = await c.create(creator, { machineId: 'documentation_flow_v1' });
    const read = await workflows.readForCreator(i.id);
    expect(read?.creatorId).toBe(creator.id);
    expect(await workflows.readForCreator(crypto.randomUUID())).toBeUndefined();

    const byId = await workflowTasks.overview(actor(creator), i.id);
    expect(byId.instance).toMatchObject({ id: i.id, state: 'intake', version: 1 });
    expect(await workflowTasks.overview(actor(creator), read!)).toEqual(byId);
    for (const given of [i.id, read!])
      await expect(workflowTasks.overview(actor(stranger), given)).rejects.toMatchObject({
        code: 'not_found',
      });
    // No approval is awaited in intake; in triage the admin may give it, the creator may not.
    expect((await workflowTasks.overview(actor(admin, true), i.id)).approver).toBe(false);
    expect((await c.transition(creator, i.id, 'triage')).status).toBe(200);
    expect((await workflowTasks.overview(actor(admin, true), i.id)).approver).toBe(true);
    expect((await workflowTasks.overview(actor(creator), i.id)).approver).toBe(false);
  });

  it("names the observer's owner the approver while an approval is awaited", async () => {
    const { workflowTasks } = t.deps.services;
    const obs = await registry({ name: 'Approver obs', level: 8, source: 'portal', userId: owner.id });
    const i = await c.create(admin, { machineId: 'triage_flow_v1', registryInstanceId: obs.id });
    const asOwner = { id: owner.id, name: 'owner', admin: false };
    expect((await workflowTasks.overview(asOwner, i.id)).approver).toBe(false);
    expect((await c.transition(owner, i.id, 'tooling_analysis')).status).toBe(200);
    expect((await workflowTasks.overview(asOwner, i.id)).approver).toBe(true);
    expect((await c.approve(owner, i.id)).status).toBe(201);
    // Approved: on to execution_fix, whose exit waits for evidence instead.
    expect((await workflowTasks.overview(asOwner, i.id)).approver).toBe(false);
    await expect(
      workflowTasks.overview({ id: stranger.id, name: 's', admin: false }, i.id),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});
