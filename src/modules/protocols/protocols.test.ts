// Protocol records and routing over HTTP, on the real app and database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../../../test/expect-problem.js';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';

let t: TestApp;
let pub: TestUser;
let core: TestUser;
let dev: TestUser;
let npc: TestUser;
let cso: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  [pub, core, dev, npc, cso] = await Promise.all([
    createUser(t, 'public'),
    createUser(t, 'core_primary'),
    createUser(t, 'developer'),
    createUser(t, 'npc'),
    createUser(t, 'cso'),
  ]);
});
afterAll(() => t.close());

const routing = (user: TestUser, query = '') =>
  t.api('GET', `/api/protocol/routing${query}`, { token: user.accessToken });

describe('seeding', () => {
  it('creates the base template and the five routing protocols, once', async () => {
    const res = await t.api('GET', '/api/protocol/protocols', { token: pub.accessToken });
    expect(res.status).toBe(200);
    const ids = res.body.protocols.map((p: { id: string }) => p.id);
    for (const id of [
      'assistant_base_v1',
      'private_protocol_v1',
      'tech_protocol_v1',
      'neutral_protocol_v1',
      'system_protocol_v1',
      'public_protocol_v1',
    ])
      expect(ids).toContain(id);
    expect(await t.deps.services.protocols.seed()).toEqual({ inserted: [] });
  });

  it('reports each record with its category and kind', async () => {
    const res = await t.api('GET', '/api/protocol/protocols/private_protocol_v1', { token: pub.accessToken });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: 'private_protocol_v1',
      category: 'PRIVATE',
      version: 1,
      builtin: true,
      kind: 'reference',
      base: 'assistant_base_v1',
      template: null,
      capabilities: { memoryAccess: 'full' },
    });
    const base = await t.api('GET', '/api/protocol/protocols/assistant_base_v1', { token: pub.accessToken });
    expect(base.body).toMatchObject({ kind: 'string', category: 'CUSTOM', base: null });
    expect(base.body.template).toContain('{{identity}}');
  });
});

describe('GET /api/protocol/routing', () => {
  it('needs a token', async () => {
    expect((await t.api('GET', '/api/protocol/routing')).status).toBe(401);
  });

  it.each([
    ['public', () => pub, 'public_protocol_v1', 'PUBLIC', false],
    ['core_primary', () => core, 'private_protocol_v1', 'PRIVATE', true],
    ['developer', () => dev, 'tech_protocol_v1', 'TECH', false],
    ['npc', () => npc, 'neutral_protocol_v1', 'NEUTRAL', false],
    ['cso', () => cso, 'system_protocol_v1', 'SYSTEM', false],
  ])('routes a %s caller by the spec table', async (_kind, who, protocolId, protocol, enforced) => {
    const res = await routing(who());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ protocolId, protocol, enforced });
    expect(res.body.reason).toMatch(/^rule \d: /);
  });

  it('uses the channel protocol for everyone but core_primary', async () => {
    const set = await t.api('POST', '/api/chat-platform/channel/config', {
      token: cso.accessToken,
      body: { channelId: 'chan-neutral', protocolId: 'neutral_protocol_v1' },
    });
    expect(set.status).toBe(200);
    expect((await routing(pub, '?channelId=chan-neutral')).body).toMatchObject({
      protocolId: 'neutral_protocol_v1',
      protocol: 'NEUTRAL',
      enforced: false,
    });
    expect((await routing(dev, '?channelId=chan-neutral')).body).toMatchObject({
      protocolId: 'neutral_protocol_v1',
    });
    expect((await routing(cso, '?channelId=chan-neutral')).body).toMatchObject({
      protocolId: 'neutral_protocol_v1',
    });
    const c = await routing(core, '?channelId=chan-neutral');
    expect(c.body).toMatchObject({ protocolId: 'private_protocol_v1', protocol: 'PRIVATE', enforced: true });
    // A channel without configuration changes nothing.
    expect((await routing(pub, '?channelId=chan-unknown')).body).toMatchObject({
      protocolId: 'public_protocol_v1',
    });
  });

  it('refuses a non-admin naming a user or a persona type (the persona is the server’s)', async () => {
    const a = await routing(pub, `?userId=${core.id}`);
    expect(a.status).toBe(403);
    expect(a.body.code).toBe('forbidden');
    const b = await routing(pub, '?personaType=coder');
    expect(b.status).toBe(403);
    // Even naming oneself: the client never chooses its persona.
    expect((await routing(npc, `?userId=${npc.id}&personaType=coder`)).status).toBe(403);
  });

  it('answers 404 not_found when an admin previews a user that does not exist', async () => {
    const res = await routing(cso, '?userId=2000000000');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'not_found' });
  });

  it('lets an admin preview another user and persona type', async () => {
    expect((await routing(cso, `?userId=${core.id}`)).body).toMatchObject({
      protocolId: 'private_protocol_v1',
      enforced: true,
    });
    expect((await routing(cso, `?userId=${pub.id}&personaType=coder`)).body).toMatchObject({
      protocol: 'TECH',
      reason: 'rule 3: coder persona',
    });
    expect((await routing(dev, `?userId=${pub.id}&personaType=npc`)).body).toMatchObject({
      protocol: 'NEUTRAL',
      reason: 'rule 4: npc persona',
    });
    expect(
      (await routing(cso, `?userId=${core.id}&personaType=coder&channelId=chan-neutral`)).body,
    ).toMatchObject({ protocol: 'PRIVATE' });
  });

  it('takes the persona type from the character profile', async () => {
    const coder = await t.deps.services.characters.createNpc({
      name: 'Cody',
      description: 'writes code',
      personaType: 'coder',
      metadata: {},
    });
    expect((await routing(cso, `?userId=${coder.id}`)).body).toMatchObject({
      protocol: 'TECH',
      reason: 'rule 3: coder persona',
    });
    const plain = await t.deps.services.characters.createNpc({
      name: 'Nell',
      description: 'a shopkeeper',
      metadata: {},
    });
    expect((await routing(cso, `?userId=${plain.id}`)).body).toMatchObject({
      protocol: 'NEUTRAL',
      reason: 'rule 4: npc account',
    });
  });

  it('routes many users at once each as alone (the family reads are batched)', async () => {
    const users = [pub, core, dev, npc, cso];
    const alone = [];
    for (const u of users) alone.push(await t.deps.services.protocols.routeUser(u.id));
    expect(new Set(alone.map((o) => o.protocolId)).size).toBe(5);
    const together = await Promise.all(
      [...users, ...users].map((u) => t.deps.services.protocols.routeUser(u.id)),
    );
    expect(together.map((o) => [o.protocolId, o.resolved])).toEqual(
      [...alone, ...alone].map((o) => [o.protocolId, o.resolved]),
    );
  });

  it('answers 400 for bad parameters and 404 for an unknown user', async () => {
    expect((await routing(cso, '?userId=abc')).status).toBe(400);
    expect((await routing(cso, '?userId=99999999')).status).toBe(404);
  });

  it('gives the chat turn the resolved protocol to compose', async () => {
    const outcome = await t.deps.services.protocols.routeUser(core.id, { channelId: 'chan-neutral' });
    expect(outcome.resolved).toMatchObject({
      id: 'private_protocol_v1',
      category: 'PRIVATE',
      capabilities: { memoryAccess: 'full' },
    });
    expect(outcome.resolved.template).toContain('{{identity}}');
  });
});

const custom = {
  id: 'support_desk_v1',
  kind: 'reference',
  base: 'assistant_base_v1',
  name: 'Support desk',
  tone: 'patient',
  overrides: { identity: 'You staff the support desk.' },
  rules: ['Solve one problem at a time.'],
  tools: ['lookupMemory'],
};

describe('POST /api/protocol/protocols', () => {
  it('needs an admin', async () => {
    expect((await t.api('POST', '/api/protocol/protocols', { body: custom })).status).toBe(401);
    const res = await t.api('POST', '/api/protocol/protocols', { token: pub.accessToken, body: custom });
    expect(res.status).toBe(403);
  });

  it('refuses a definition that does not validate with 422 invalid_definition', async () => {
    const shape = await t.api('POST', '/api/protocol/protocols', {
      token: cso.accessToken,
      body: { id: 'broken_v1', kind: 'string', name: 'No template' },
    });
    expect(shape.status).toBe(422);
    expect(shape.body.code).toBe('invalid_definition');
    expect(shape.body.errors.map((e: { path: string }) => e.path)).toContain('template');
    const semantic = await t.api('POST', '/api/protocol/protocols', {
      token: cso.accessToken,
      body: { ...custom, base: 'missing_base_v1' },
    });
    expect(semantic.status).toBe(422);
    expect(semantic.body.errors).toEqual([{ path: 'base', message: 'no protocol missing_base_v1 exists' }]);
    const unversioned = await t.api('POST', '/api/protocol/protocols', {
      token: cso.accessToken,
      body: { ...custom, id: 'support_desk' },
    });
    expect(unversioned.status).toBe(422);
    const typo = await t.api('POST', '/api/protocol/protocols', {
      token: cso.accessToken,
      body: { ...custom, overrides: { identiy: 'x' } },
    });
    expect(typo.status).toBe(422);
    expect(typo.body.errors[0].path).toBe('overrides.identiy');
  });

  it('answers 400 for a body that is not JSON', async () => {
    const res = await t.api('POST', '/api/protocol/protocols', { token: cso.accessToken, body: '{nope' });
    expect(res.status).toBe(400);
  });

  it('creates a protocol, then 409 for the same id', async () => {
    const res = await t.api('POST', '/api/protocol/protocols', { token: cso.accessToken, body: custom });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: 'support_desk_v1',
      category: 'CUSTOM',
      version: 1,
      builtin: false,
      kind: 'reference',
      tools: ['lookupMemory'],
    });
    expect(
      (await t.api('GET', '/api/protocol/protocols/support_desk_v1', { token: npc.accessToken })).body.name,
    ).toBe('Support desk');
    const again = await t.api('POST', '/api/protocol/protocols', { token: cso.accessToken, body: custom });
    expect(again.status).toBe(409);
  });

  it('routes a channel to a custom protocol', async () => {
    await t.api('POST', '/api/chat-platform/channel/config', {
      token: cso.accessToken,
      body: { channelId: 'support', protocolId: 'support_desk_v1' },
    });
    expect((await routing(pub, '?channelId=support')).body).toMatchObject({
      protocolId: 'support_desk_v1',
      protocol: 'CUSTOM',
      enforced: false,
      reason: 'rule 2: the channel is configured with support_desk_v1',
    });
  });
});

describe('GET /api/protocol/protocols/<id>', () => {
  it('answers 401, 400 and 404', async () => {
    expect((await t.api('GET', '/api/protocol/protocols/public_protocol_v1')).status).toBe(401);
    expect((await t.api('GET', '/api/protocol/protocols/Not-An-Id', { token: pub.accessToken })).status).toBe(
      400,
    );
    const missing = await t.api('GET', '/api/protocol/protocols/nothing_here_v1', { token: pub.accessToken });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
  });
});

describe('PUT /api/protocol/protocols/<id>', () => {
  const { id: _id, ...update } = {
    ...custom,
    rules: ['Solve one problem at a time.', 'Close the ticket politely.'],
  };

  it('needs an admin', async () => {
    expect((await t.api('PUT', '/api/protocol/protocols/support_desk_v1', { body: update })).status).toBe(
      401,
    );
    expect(
      (
        await t.api('PUT', '/api/protocol/protocols/support_desk_v1', {
          token: npc.accessToken,
          body: update,
        })
      ).status,
    ).toBe(403);
  });

  it('refuses a bad definition, a changed id and an unknown protocol', async () => {
    const bad = await t.api('PUT', '/api/protocol/protocols/support_desk_v1', {
      token: dev.accessToken,
      body: { ...update, tools: ['*', 'x'] },
    });
    expect(bad.status).toBe(422);
    const renamed = await t.api('PUT', '/api/protocol/protocols/support_desk_v1', {
      token: dev.accessToken,
      body: { ...update, id: 'support_desk_v2' },
    });
    expect(renamed.status).toBe(422);
    expect(renamed.body.errors[0].path).toBe('id');
    expect(
      (await t.api('PUT', '/api/protocol/protocols/unknown_v1', { token: dev.accessToken, body: update }))
        .status,
    ).toBe(404);
    expect(
      (await t.api('PUT', '/api/protocol/protocols/Bad', { token: dev.accessToken, body: update })).status,
    ).toBe(400);
  });

  it('keeps a base string-based while others reference it', async () => {
    const res = await t.api('PUT', '/api/protocol/protocols/assistant_base_v1', {
      token: cso.accessToken,
      body: { kind: 'reference', base: 'support_desk_v1', name: 'Base' },
    });
    const problem = expectProblem(res, 422, 'invalid_definition');
    expect(problem.errors).toContainEqual({
      path: 'kind',
      message: expect.stringMatching(/^must stay string-based: .+ use it as their base$/) as string,
    });
  });

  it('replaces the definition and keeps the id', async () => {
    const res = await t.api('PUT', '/api/protocol/protocols/support_desk_v1', {
      token: dev.accessToken,
      body: update,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: 'support_desk_v1',
      rules: ['Solve one problem at a time.', 'Close the ticket politely.'],
    });
    const resolved = await t.deps.services.protocols.resolve('support_desk_v1');
    expect(resolved.rules).toHaveLength(2);
  });

  it('survives a restart: seeding never overwrites an admin’s edit', async () => {
    const { id: _pid, ...pub1 } = (
      await t.api('GET', '/api/protocol/protocols/public_protocol_v1', { token: cso.accessToken })
    ).body;
    const body = {
      kind: 'reference',
      base: 'assistant_base_v1',
      name: pub1.name,
      tone: 'crisp',
      overrides: pub1.overrides,
      rules: pub1.rules,
      tools: pub1.tools,
      capabilities: pub1.capabilities,
    };
    expect(
      (await t.api('PUT', '/api/protocol/protocols/public_protocol_v1', { token: cso.accessToken, body }))
        .status,
    ).toBe(200);
    await t.deps.services.protocols.seed();
    expect(
      (await t.api('GET', '/api/protocol/protocols/public_protocol_v1', { token: cso.accessToken })).body
        .tone,
    ).toBe('crisp');
  });
});

describe('versions', () => {
  it('routes to the newest version of a routing family', async () => {
    const v1 = (await t.api('GET', '/api/protocol/protocols/tech_protocol_v1', { token: cso.accessToken }))
      .body;
    const body = {
      id: 'tech_protocol_v2',
      kind: 'reference',
      base: v1.base,
      name: 'Tech protocol 2',
      tone: v1.tone,
      overrides: v1.overrides,
      rules: [...v1.rules, 'Cite file paths.'],
      tools: v1.tools,
      capabilities: v1.capabilities,
    };
    const res = await t.api('POST', '/api/protocol/protocols', { token: cso.accessToken, body });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ category: 'TECH', version: 2 });
    expect((await routing(dev)).body).toMatchObject({ protocolId: 'tech_protocol_v2', protocol: 'TECH' });
    // A channel pinned to a version keeps it.
    await t.api('POST', '/api/chat-platform/channel/config', {
      token: cso.accessToken,
      body: { channelId: 'pinned', protocolId: 'tech_protocol_v1' },
    });
    expect((await routing(pub, '?channelId=pinned')).body).toMatchObject({ protocolId: 'tech_protocol_v1' });
  });
});
