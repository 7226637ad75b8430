import type { Config } from '../../config.js';
import type { AppPlugin } from '../../platform/http/types.js';
import { webhooksRoutes, type WebhooksRoutesOptions } from './webhooks.routes.js';
import { deriveSecretKey } from './webhooks.secrets.js';
import { WebhooksService, type WebhooksServiceDeps } from './webhooks.service.js';
import './webhooks.tables.js';

export {
  WebhooksService,
  WEBHOOK_DELIVERY_JOB,
  type WebhooksOptions,
  type WebhooksServiceDeps,
} from './webhooks.service.js';
export { deriveSecretKey } from './webhooks.secrets.js';
export { signedHeaders } from './webhooks.rules.js';

/** The module's HTTP door (mounted by app.ts): `/api/admin/webhooks/*`. Deliveries need no
 * route: the service subscribes to the timeline's flush (deps.ts) and runs its own job. */
export const webhooksPlugin: AppPlugin<WebhooksRoutesOptions> = async (app, opts) =>
  webhooksRoutes(app, opts);

/** Builds the webhooks service: `onRecorded`, subscribed to the unit of work's timeline flush in
 * deps.ts, makes the deliveries in every timeline event's transaction, and its job delivers them. Without WEBHOOK_SECRET_KEY the key that encrypts the stored signing
 * secrets is derived from the JWT secret. */
export function createWebhooksModule(
  deps: WebhooksServiceDeps,
  config: Pick<Config, 'webhooks' | 'allowLoopbackTargetsForTests'>,
  jwtSecret: string,
): WebhooksService {
  return new WebhooksService(deps, {
    secretKey: config.webhooks.secretKey ?? deriveSecretKey(jwtSecret),
    timeoutMs: config.webhooks.timeoutMs,
    maxAttempts: config.webhooks.maxAttempts,
    retryDelaySeconds: config.webhooks.retryDelaySeconds,
    deliveryRetentionDays: config.webhooks.deliveryRetentionDays,
    endpointsCacheMs: 30_000,
    allowLoopbackForTests: config.allowLoopbackTargetsForTests,
  });
}
