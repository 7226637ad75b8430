// Makes the offline embedder's word-vector cache, builds the service for the child processes
// (service-build.ts), then builds one migrated database (schema + job queue tables) before the
// test files run, so that no file runs initdb or the migrations itself.
// On PGlite it is saved as a tarball that every test app starts its own PGlite from; on the
// Postgres lane it is a template database that every test app copies into a database of its own
// (CREATE DATABASE … TEMPLATE).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { ensureCache } from '../src/platform/models/word-vectors.js';
import { testEnv } from './env.js';
import { createDatabase, databaseUrl, dropDatabase } from './schema.js';
import { build, buildService } from './service-build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string | null;
    /** The Postgres lane's template: a database, and the schema its objects live in. */
    postgresTemplate: { database: string; schema: string } | null;
    /** The service's build (its dist/ directory) that the child processes run. */
    serviceBuild: string;
  }
}

/** The schema of the template's objects (and so of every copy's). */
const TEMPLATE_SCHEMA = 't_template';

export default async function setup(project: TestProject) {
  // Built while the template is made (the build is another process). A setup that fails leaves
  // neither behind.
  const building = buildService();
  let removeTemplate: () => Promise<void>;
  try {
    // The offline embedder's compact word vectors, made once per machine before the workers
    // start (each would otherwise make its own copy the first time).
    ensureCache();
    removeTemplate = await makeTemplate(project);
  } catch (err) {
    (await building.catch(() => undefined))?.remove();
    throw err;
  }
  const service = await building.catch(async (err: unknown) => {
    await removeTemplate();
    throw err;
  });
  project.provide('serviceBuild', service.dist);
  // Watch mode: a rerun's child processes run the sources as they are now.
  project.onTestsRerun(() => build(service.dist));
  return async () => {
    await removeTemplate();
    service.remove();
  };
}

/** The migrated template, provided; resolves with what removes it. */
async function makeTemplate(project: TestProject): Promise<() => Promise<void>> {
  const url = process.env.DATABASE_URL;
  if (url) {
    project.provide('pgliteTemplate', null);
    const database = `ap_template_${randomBytes(4).toString('hex')}`;
    await createDatabase(url, database);
    const deps = await createDeps(
      loadConfig(
        testEnv({ DATABASE_URL: databaseUrl(url, database), DB_SCHEMA: TEMPLATE_SCHEMA, SERVICES: 'api' }),
      ),
    );
    await deps.jobs.stop();
    await deps.close();
    project.provide('postgresTemplate', { database, schema: TEMPLATE_SCHEMA });
    return () => dropDatabase(url, database);
  }
  project.provide('postgresTemplate', null);
  const dir = mkdtempSync(join(tmpdir(), 'ap-template-'));
  const path = join(dir, 'template.tar');
  const deps = await createDeps(loadConfig(testEnv({ DATABASE_URL: 'memory://', SERVICES: 'api' })));
  await deps.jobs.stop();
  await deps.database.dumpTo!(path);
  await deps.close();
  project.provide('pgliteTemplate', path);
  return async () => rmSync(dir, { recursive: true, force: true });
}
