import type { AppPlugin } from '../../platform/http/types.js';
import { personaRoutes, type PersonaRoutesOptions } from './persona.routes.js';
import './persona.tables.js';

export { PersonaService, type PersonaServiceDeps } from './persona.service.js';
export { PERSONAS, personaTypeOf, type Persona } from './persona.rules.js';
export type { PersonaSessionView } from './persona.schemas.js';

/** The module's HTTP door (mounted by app.ts): `/api/persona/*`. The chat turn reaches persona
 * sessions through `PersonaService.forTurn`, given to it as its persona port. */
export const personaPlugin: AppPlugin<PersonaRoutesOptions> = async (app, opts) => personaRoutes(app, opts);
