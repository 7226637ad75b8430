import { currentUser } from '../../platform/http/auth.js';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import type { ChatPlatformService } from './chat-platform.service.js';
import { channelConfigBody, channelConfigSchema, channelIdParam } from './chat-platform.schemas.js';

export function chatPlatformRoutes(app: App, { chatPlatform }: { chatPlatform: ChatPlatformService }) {
  const tags = ['chat-platform'];

  app.get(
    '/api/chat-platform/channel/config/:channelId',
    {
      schema: {
        tags,
        summary: "A chat-platform channel's configuration",
        params: channelIdParam,
        response: { 200: channelConfigSchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => chatPlatform.getChannelConfig(req.params.channelId),
  );

  app.post(
    '/api/chat-platform/channel/config',
    {
      // the API contract: channel-configuration writes need an admin.
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: "Set a channel's protocol (overrides routing except for core_primary accounts)",
        body: channelConfigBody,
        response: { 200: channelConfigSchema, ...problems(400, 401, 403) },
      },
    },
    async (req) => chatPlatform.setChannelConfig(req.body, currentUser(req).id),
  );
}
