import type { AppPlugin } from '../../platform/http/types.js';
import { webhooksRoutes, type WebhooksRoutesOptions } from './webhooks.routes.js';
import './webhooks.tables.js';

export {
  WebhooksService,
  WEBHOOK_DELIVERY_JOB,
  type WebhooksOptions,
  type WebhooksServiceDeps,
} from './webhooks.service.js';
export { deriveSecretKey } from './webhooks.secrets.js';

/** The module's HTTP door (mounted by app.ts): `/api/admin/webhooks/*`. Deliveries need no
 * route: the service joins the timeline's recording transaction and runs its own job. */
export const webhooksPlugin: AppPlugin<WebhooksRoutesOptions> = async (app, opts) =>
  webhooksRoutes(app, opts);
