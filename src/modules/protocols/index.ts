import type { AppPlugin } from '../../platform/http/types.js';
import type { ProtocolsService } from './protocols.service.js';
import { protocolsRoutes } from './protocols.routes.js';
import './protocols.tables.js';

export { ProtocolsService } from './protocols.service.js';
export type {
  ChannelProtocolLookup,
  SubjectResolver,
  RoutingOutcome,
  RouteOptions,
  RoutingSubject,
} from './protocols.service.js';
export {
  allowedTools,
  composeSystemPrompt,
  groundFloorSection,
  isGroundFloor,
  mergeProtocols,
  routeProtocol,
  type ComposeInput,
  type ComposedPrompt,
  type PlaceholderValues,
  type ResolvedProtocol,
  type ToolDefinition,
} from './protocols.rules.js';

export { protocolIdSchema, type Capabilities, type ProtocolDefinition } from './protocols.schemas.js';

/** The module's HTTP door (mounted by app.ts). */
export const protocolsPlugin: AppPlugin<{ protocols: ProtocolsService }> = async (app, opts) =>
  protocolsRoutes(app, opts);
