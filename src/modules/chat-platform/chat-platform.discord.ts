// The Discord transport of the chat-platform bot (discord.js v14), loaded only when
// CHAT_PLATFORM_BOT_TOKEN is set. Messages are posted over Discord's REST API from any node; the
// gateway session that receives slash commands (and registers them) and messages is opened only
// where `gateway` is set, since Discord hands a bot's interactions to one session (every session
// receives each message: the bot claims a message once, chat-platform.chat.ts). Reading messages
// needs the Guild Messages intent and the privileged Message Content intent, which the bot's
// application must have enabled. Not covered by tests: it is the network; everything it decides
// is in chat-platform.discord.rules.ts, the bot and chat-platform.chat.ts.
import type { Logger } from 'pino';
import type { ChatPlatformTransport, IncomingCommand, MessageHandler } from './chat-platform.bot.js';
import type { SlashCommand } from './chat-platform.discord.rules.js';

export async function discordTransport(
  token: string,
  log: Logger,
  opts: { gateway: boolean },
): Promise<ChatPlatformTransport> {
  const { Client, Events, GatewayIntentBits, REST, Routes } = await import('discord.js');
  const rest = new REST({ version: '10' }).setToken(token);
  const client = opts.gateway
    ? new Client({
        intents: [
          GatewayIntentBits.Guilds,
          GatewayIntentBits.GuildMessages,
          GatewayIntentBits.MessageContent,
        ],
      })
    : undefined;
  const noMentions = { parse: [] };

  return {
    async start(
      commands: SlashCommand[],
      onCommand: (c: IncomingCommand) => Promise<string>,
      onMessage: MessageHandler,
    ) {
      if (!client) return;
      client.on(Events.MessageCreate, (message) => {
        const me = client.user;
        if (!me || message.author.id === me.id) return;
        void (async () => {
          try {
            const channel = message.channel;
            const text = await onMessage(
              {
                id: message.id,
                content: message.content,
                platformUserId: message.author.id,
                fromBot: message.author.bot,
                channelId: message.channelId,
                parentChannelId: channel.isThread() ? channel.parentId : null,
                guildId: message.guildId,
                // A reply that pings the bot lists it among the mentioned users too.
                mentionsBot: message.mentions.users.has(me.id),
                botUserId: me.id,
              },
              () => {
                if (channel.isSendable()) channel.sendTyping().catch(() => undefined);
              },
            );
            if (text !== null)
              await message.reply({ content: text, allowedMentions: { parse: [], repliedUser: false } });
          } catch (err) {
            log.warn({ err, messageId: message.id }, 'discord message failed');
          }
        })();
      });
      client.on(Events.InteractionCreate, (interaction) => {
        if (!interaction.isChatInputCommand()) return;
        void (async () => {
          try {
            await interaction.deferReply();
            const text = await onCommand({
              name: interaction.commandName,
              options: interaction.options.data.map((o) => ({ name: o.name, value: o.value })),
              platformUserId: interaction.user.id,
              channelId: interaction.channelId,
              guildId: interaction.guildId,
            });
            await interaction.editReply({ content: text, allowedMentions: noMentions });
          } catch (err) {
            log.warn({ err, command: interaction.commandName }, 'discord interaction failed');
          }
        })();
      });
      client.on(Events.Error, (err) => log.warn({ err }, 'discord gateway error'));
      await client.login(token);
      const app = (await rest.get(Routes.currentApplication())) as { id: string };
      await rest.put(Routes.applicationCommands(app.id), { body: commands });
      log.info({ commands: commands.length }, 'discord bot connected, slash commands registered');
    },
    async post(channelId: string, text: string) {
      await rest.post(Routes.channelMessages(channelId), {
        body: { content: text, allowed_mentions: noMentions },
      });
    },
    async stop() {
      await client?.destroy();
    },
  };
}
