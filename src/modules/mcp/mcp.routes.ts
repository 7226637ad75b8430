// `/mcp`: the Model Context Protocol over Streamable HTTP (stateless: each POST carries one
// JSON-RPC message or batch and gets its answer as JSON). The caller is a user, by their access
// token or an API key with the `mcp` scope acting as the account it belongs to. The MCP SDK (and
// the tools built on it) is loaded at the first request, not at start: a start that never serves
// MCP does not pay for it.
import { currentUser } from '../../platform/http/auth.js';
import { AppError } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import type { McpServices } from './mcp.server.js';

let sdk:
  | Promise<
      [typeof import('./mcp.server.js'), typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')]
    >
  | undefined;

export function mcpRoutes(app: App, services: McpServices) {
  const config = { auth: { userOrKey: 'mcp' as const } };

  app.post('/mcp', { config, schema: { hide: true } }, async (req, reply) => {
    sdk ??= Promise.all([
      import('./mcp.server.js'),
      import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    ]);
    const [{ mcpServerFor }, { StreamableHTTPServerTransport }] = await sdk;
    const server = mcpServerFor(currentUser(req), services);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    // The transport answers on the raw response; Fastify leaves it alone from here.
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  });

  // Stateless: no server-sent stream to open and no session to end.
  for (const method of ['GET', 'DELETE'] as const)
    app.route({
      method,
      url: '/mcp',
      config,
      schema: { hide: true },
      handler: async () => {
        throw new AppError(
          'method_not_allowed',
          'This MCP endpoint is stateless: send messages with POST',
          {},
          {
            allow: 'POST',
          },
        );
      },
    });
}
