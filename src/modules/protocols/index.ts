import type { AppModule } from '../index.js';
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
  mergeProtocols,
  routeProtocol,
  type ComposeInput,
  type ComposedPrompt,
  type PlaceholderValues,
  type ResolvedProtocol,
  type ToolDefinition,
} from './protocols.rules.js';
export const protocolsModule: AppModule = { name: 'protocols', routes: protocolsRoutes };
