// `npm run client:types`: regenerates src/client/api.generated.ts (the typed client's REST types)
// from the OpenAPI document of the app as built. test/client.test.ts fails while the committed file
// differs from what this generates, so a changed route ships with its types.
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import prettier from 'prettier';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { testEnv } from '../test/env.js';

export const CLIENT_TYPES_FILE = fileURLToPath(new URL('../src/client/api.generated.ts', import.meta.url));

/** The generated file's text for an OpenAPI document, formatted as the repository formats. */
export async function clientTypes(openapi: unknown): Promise<string> {
  const ast = await openapiTS(openapi as Parameters<typeof openapiTS>[0], { silent: true });
  const text = COMMENT_HEADER + astToString(ast);
  const config = await prettier.resolveConfig(CLIENT_TYPES_FILE);
  return prettier.format(text, { ...config, filepath: CLIENT_TYPES_FILE });
}

async function main() {
  // The document as the tests see it (the same configuration), on a throwaway database.
  const config = loadConfig(testEnv({ DATABASE_URL: 'memory://', SERVICES: 'api' }));
  const deps = await createDeps(config, { jobs: false });
  try {
    const { app } = await buildApp(deps);
    writeFileSync(CLIENT_TYPES_FILE, await clientTypes(app.swagger()));
    await app.close();
  } finally {
    await deps.close();
  }
  process.stdout.write(`wrote ${CLIENT_TYPES_FILE}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
