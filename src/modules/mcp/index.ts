import type { AppPlugin } from '../../platform/http/types.js';
import { mcpRoutes } from './mcp.routes.js';
import type { McpServices } from './mcp.server.js';

export type { McpServices } from './mcp.server.js';

/** The MCP door (`/mcp`, mounted by app.ts): the caller's memory, timeline and inventory as MCP
 * tools, through the memory, timeline and inventory services. */
export const mcpPlugin: AppPlugin<McpServices> = async (app, opts) => mcpRoutes(app, opts);
