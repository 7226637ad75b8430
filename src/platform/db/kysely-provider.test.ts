// The Kysely provider replacement (kysely-provider.ts) against the library as installed: on
// another minor version, or if Kysely's provider changed shape, this fails before anything else.
import { readFileSync } from 'node:fs';
import { SingleConnectionProvider, type DatabaseConnection } from 'kysely';
import { describe, expect, it } from 'vitest';
import './kysely-provider.js';

const connection = {} as DatabaseConnection;

describe('the Kysely single-connection provider', () => {
  it('is the version range it was checked on (0.29.x)', () => {
    // Its package.json is not among its exports: read as installed.
    const manifest = new URL('../../../node_modules/kysely/package.json', import.meta.url);
    const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
    expect(version).toMatch(/^0\.29\./);
  });

  it('hands its connection to a second consumer while the first is still running', async () => {
    const provider = new SingleConnectionProvider(connection);
    const started: number[] = [];
    let releaseFirst!: () => void;
    const first = provider.provideConnection(async (c) => {
      started.push(1);
      await new Promise<void>((r) => (releaseFirst = r));
      return c;
    });
    const second = provider.provideConnection(async (c) => {
      started.push(2);
      return c;
    });
    // Kysely's own provider would hold the second back until the first settled: with the first
    // still running, one turn of the event loop sees both started and the second answered.
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([1, 2]);
    await expect(second).resolves.toBe(connection);
    releaseFirst();
    await expect(first).resolves.toBe(connection);
  });
});
