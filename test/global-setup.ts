// Makes the offline embedder's word-vector cache, then builds one migrated embedded database (schema + job queue tables) and saves it as a tarball;
// every test file starts its own PGlite from that template instead of running initdb and the
// migrations again. On the Postgres lane each test file gets its own schema instead.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { ensureCache } from '../src/platform/models/word-vectors.js';
import { testEnv } from './env.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string | null;
  }
}

export default async function setup(project: TestProject) {
  // The offline embedder's compact word vectors, made once per machine before the workers start
  // (each would otherwise make its own copy the first time).
  ensureCache();
  if (process.env.DATABASE_URL) {
    project.provide('pgliteTemplate', null);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'ap-template-'));
  const path = join(dir, 'template.tar');
  const deps = await createDeps(loadConfig(testEnv({ DATABASE_URL: 'memory://', SERVICES: 'api' })));
  await deps.jobs.stop();
  await deps.database.dumpTo!(path);
  await deps.close();
  project.provide('pgliteTemplate', path);
  return () => rmSync(dir, { recursive: true, force: true });
}
