// First start: the rows the service needs before its first request (the API contract's assistant
// and root observer, the builtin protocols and workflows) and, when configured, the first
// administrator. Every step is idempotent and safe when several nodes start together.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { CharactersService } from '../modules/characters/index.js';
import type { ProtocolsService } from '../modules/protocols/index.js';
import type { TimelineService } from '../modules/timeline/index.js';
import type { UsersService } from '../modules/users/index.js';
import type { WorkflowsService } from '../modules/workflows/index.js';

export interface SeedParts {
  config: Pick<Config, 'assistantName' | 'firstAdmin'>;
  log: Logger;
  characters: Pick<CharactersService, 'ensureAssistant'>;
  users: Pick<UsersService, 'ensureFirstAdmin'>;
  timeline: Pick<TimelineService, 'ensureRootObserver'>;
  protocols: Pick<ProtocolsService, 'seed'>;
  workflows: Pick<WorkflowsService, 'seed'>;
}

/** Runs after the migrations, once every service is built and before the job queue starts. */
export async function seedFirstStart({ config, log, ...s }: SeedParts): Promise<void> {
  // The assistant's own user first: the root observer and the world memories name it.
  await s.characters.ensureAssistant(config.assistantName);
  // ADMIN_EMAIL/ADMIN_PASSWORD: the first administrator, before the root observer takes its owner.
  if (config.firstAdmin) {
    const outcome = await s.users.ensureFirstAdmin(config.firstAdmin);
    if (outcome === 'created') log.info({ email: config.firstAdmin.email }, 'first administrator created');
    if (outcome === 'email_taken')
      log.warn(
        { email: config.firstAdmin.email },
        'ADMIN_EMAIL belongs to an existing account that is not an administrator: no administrator was made (promote it with the CLI: users set-role)',
      );
  }
  await s.timeline.ensureRootObserver();
  // The builtin protocols (spec "Protocol ids"); inserts only the missing ones.
  await s.protocols.seed();
  // The workflow protocols and definitions (after the protocols they reference).
  await s.workflows.seed();
}
