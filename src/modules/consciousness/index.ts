// Subject consciousness: onboarding, core-belief encoding, diary compliance and the country
// dashboard (`/api/subject-consciousness/*`). Owns no table.
import type { AppPlugin } from '../../platform/http/types.js';
import { consciousnessRoutes } from './consciousness.routes.js';
import type { ConsciousnessService } from './consciousness.service.js';

export { ConsciousnessService, type ComplianceResult, type ProjectStats } from './consciousness.service.js';

/** The module's HTTP door (mounted by app.ts). */
export const consciousnessPlugin: AppPlugin<{ consciousness: ConsciousnessService }> = async (app, opts) =>
  consciousnessRoutes(app, opts);
