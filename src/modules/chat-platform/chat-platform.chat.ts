// The chat platform as a chat client of the one assistant: a message that mentions the bot, or any
// message in a configured channel (one with a chat-platform channel configuration, or a thread of
// one), is a chat turn of the account its author is linked to, run by the chat service exactly as
// a socket's chatMessage is (the same rate limit, size limit, storage and memory), routed by that
// channel, and answered with the turn's replies. The transport (chat-platform.bot.ts) posts the
// answer as a reply to the message.
import type { Logger } from 'pino';
import type { UserPrincipal } from '../../platform/http/auth.js';
import { toProblem } from '../../platform/http/problem.js';
import type { CounterStore } from '../../platform/http/rate-limit.js';
import type { AccountState } from '../../platform/security/account-state.js';
import { isAdmin } from '../../platform/security/identity.rules.js';
import { ChatTurnError, type AssistantResponse, type ChatService, type TurnEmitter } from '../chat/index.js';
import type { ChatPlatformService } from './chat-platform.service.js';
import { messageText } from './chat-platform.discord.rules.js';
import { linkAccountText, problemText, repliesText } from './chat-platform.messages.rules.js';

/** A message as the platform delivered it. */
export interface IncomingMessage {
  /** The platform's message id (a redelivery carries the same). */
  id: string;
  content: string;
  platformUserId: string;
  /** Written by a bot (this one included): never answered, so bots cannot talk in a loop. */
  fromBot: boolean;
  channelId: string;
  /** The channel a thread belongs to; null outside threads. */
  parentChannelId: string | null;
  guildId: string | null;
  /** Whether the message mentions the bot (a reply to the bot's message that pings it counts). */
  mentionsBot: boolean;
  /** The bot's own user id, whose mentions are taken out of the text. */
  botUserId: string;
}

export interface ChatPlatformChatDeps {
  chat: Pick<ChatService, 'handleMessage'>;
  chatPlatform: ChatPlatformService;
  /** Shared by every node: the claim of a message id. */
  counters: CounterStore;
  /** The account as it is now (the per-node cache that access tokens are checked against). */
  accountState(userId: number): Promise<AccountState | undefined> | AccountState | undefined;
  adminUserIds: readonly number[];
  log: Logger;
}

// Each gateway session receives every message (one per worker node), and a resumed session may
// deliver one again: a message id is claimed once in the shared counters, and only its claimer
// answers. A day is far longer than any redelivery.
const CLAIM_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The turn's `clientMessageId`: the stored message names the platform message it came from. */
export const clientMessageIdOf = (messageId: string) => `chat-platform:${messageId}`;

export class ChatPlatformChat {
  constructor(private readonly d: ChatPlatformChatDeps) {}

  /** The reply to a message, or null when the bot does not answer it (not addressed to it, a
   * bot's, or a redelivery). `typing` is called once the turn starts. */
  async answer(m: IncomingMessage, typing: () => void = () => undefined): Promise<string | null> {
    if (m.fromBot) return null;
    const channel = await this.d.chatPlatform.configuredChannel(m.channelId, m.parentChannelId);
    if (!m.mentionsBot && channel === null) return null;
    const claim = await this.d.counters.hit(`chat-platform:message:${m.id}`, CLAIM_WINDOW_MS);
    if (claim.count > 1) return null;

    const userId = await this.d.chatPlatform.linkedUserId(m.platformUserId);
    const user = userId === null ? undefined : await this.principalOf(userId, m.platformUserId);
    if (!user) return linkAccountText(m.platformUserId);

    const replies: AssistantResponse[] = [];
    const emit: TurnEmitter = {
      thinking: () => typing(),
      delta: () => undefined,
      response: (e) => replies.push(e),
      idle: () => undefined,
      npcThinking: () => undefined,
      directResponse: () => undefined,
    };
    try {
      await this.d.chat.handleMessage(
        user,
        {
          message: messageText(m.content, m.botUserId),
          clientMessageId: clientMessageIdOf(m.id),
          // An unconfigured channel (a mention) routes as none, until it is configured.
          channelId: channel ?? m.channelId,
          // The platform shows a message once whole: nothing to stream.
          preferences: { stream: false },
        },
        emit,
      );
      // A group's director may let nobody answer; the platform refuses an empty message.
      return replies.length ? repliesText(replies) : null;
    } catch (err) {
      // The turn logged its own failures; anything else is this adapter's.
      if (err instanceof ChatTurnError) return problemText(err.problem);
      this.d.log.error({ err, messageId: m.id }, 'chat-platform message failed');
      return problemText(toProblem(err));
    }
  }

  /** The linked account, with its rights as they are now (as an API key's request runs), as whom
   * the turn runs; undefined when the account is gone. No token: no session to end. */
  private async principalOf(id: number, platformUserId: string): Promise<UserPrincipal | undefined> {
    const state = await this.d.accountState(id);
    if (!state) return undefined;
    const { role, accountType, name } = state;
    return {
      kind: 'user',
      id,
      role,
      accountType,
      name,
      admin: isAdmin({ id, role, accountType }, this.d.adminUserIds),
      // The turn comes from the chat platform, whatever client the account signed in with.
      clientType: 'chat_platform',
      jti: `chat-platform:${platformUserId}`,
      exp: Number.MAX_SAFE_INTEGER,
      sid: undefined,
    };
  }
}
