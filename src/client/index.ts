// The typed client (`assistant-platform/client`): REST through openapi-fetch with the types
// generated from the OpenAPI document (api.generated.ts, `npm run client:types`), Socket.IO with
// the server's own event maps, and the session's tokens refreshed when they expire (before a request
// when the expiry is known, and once more on a `token_expired` answer or socket error).
//
//   const client = createClient({ baseUrl: 'http://127.0.0.1:3000' });
//   await client.login('me@example.com', 'a long password');
//   const { data } = await client.api.GET('/api/memories', { params: { query: { limit: 5 } } });
//   const chat = await client.chat();
//   const turn = await chat.send('Hello', { onDelta: (text) => process.stdout.write(text) });
//
// No Node-only module: it runs in browsers as well (a bundler resolves the TypeScript source).
import createFetchClient, { type Client } from 'openapi-fetch';
import { io, type Socket } from 'socket.io-client';
import type {
  AssistantResponse,
  ChatAck,
  ChatClientEvents,
  ChatServerEvents,
} from '../modules/chat/index.js';
import type { ObserverServerEvents } from '../modules/observer/index.js';
import type { components, paths } from './api.generated.js';

export type { paths, components };
export type { ChatClientEvents, ChatServerEvents, ObserverServerEvents, AssistantResponse };

/** The body of every error answer (RFC 9457 problem+json with a stable `code`). */
export type Problem = components['schemas']['Problem'];
export type TokenResponse = components['schemas']['TokenResponse'];
export type Choice = { id: string; text: string };

export interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds after which the access token is refreshed before use (when known). */
  expiresAt?: number | undefined;
}

export interface ClientOptions {
  /** The server, e.g. http://127.0.0.1:3000 (no trailing /api). */
  baseUrl: string;
  /** A session to resume (tokens kept from an earlier login). */
  tokens?: Tokens | undefined;
  /** Called after a login and each refresh with the new tokens (undefined once the session ended):
   * persist them to resume later. */
  onTokens?: ((tokens: Tokens | undefined) => void) | undefined;
  /** `clientType` sent at login (default web_portal). */
  clientType?: 'web_portal' | 'chat_platform' | 'api' | 'game_client' | 'mobile' | 'vr' | 'ar';
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /** Failsafe for socket acknowledgements, ms (default 120000: a turn may wait on a model). */
  ackTimeoutMs?: number;
}

/** An error answer of the server: its problem+json body. */
export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.code}: ${problem.detail ?? problem.title}`);
    this.name = 'ApiError';
  }
  get code(): string {
    return this.problem.code;
  }
}

/** A turn's outcome: the ids of the user's message, the replies, and the suggested next replies. */
export interface ChatTurn {
  conversationId: number;
  messageId: number;
  replies: AssistantResponse[];
  choices: Choice[];
}

export interface SendOptions {
  conversationId?: number;
  npcUserId?: number;
  /** The channel the message comes from: routing applies the protocol configured for it. */
  channelId?: string;
  clientMessageId?: string;
  preferences?: { language?: string; responseLength?: 'short' | 'medium' | 'long'; stream?: boolean };
  /** Each streamed piece of a reply's text, as it arrives. */
  onDelta?: (text: string, e: { conversationId: number; messageId: number }) => void;
}

export type ChatSocket = Socket<ChatServerEvents, ChatClientEvents>;
export type ObserverSocket = Socket<ObserverServerEvents, Record<string, never>>;

export interface ChatConnection {
  /** The connected socket, typed by the server's event maps. */
  socket: ChatSocket;
  /** Sends a message and resolves once the turn is answered (rejects with ApiError on chatError). */
  send(message: string, opts?: SendOptions): Promise<ChatTurn>;
  close(): void;
}

export interface AssistantClient {
  /** Typed REST: `api.GET('/api/memories', …)`, `api.POST('/api/assistant/memory', { body })`. */
  api: Client<paths>;
  readonly tokens: Tokens | undefined;
  login(email: string, password: string): Promise<TokenResponse>;
  register(email: string, password: string, name?: string): Promise<TokenResponse>;
  /** Trades the refresh token for new tokens (one refresh at a time, shared by its callers). */
  refresh(): Promise<Tokens>;
  logout(): Promise<void>;
  /** Connects the chat namespace with the session's token. */
  chat(): Promise<ChatConnection>;
  /** Connects the `/observer` namespace to watch one observer's timeline (with the observers
   * below it), or several observers' on one connection (each event once). */
  observer(observerId: number | number[]): Promise<ObserverSocket>;
}

/** Refresh this long before the access token's expiry. */
const REFRESH_MARGIN_MS = 30_000;

const problemOf = (body: unknown, status: number): Problem =>
  body && typeof body === 'object' && 'code' in body
    ? (body as Problem)
    : { type: 'about:blank', title: `HTTP ${status}`, status, code: 'internal', detail: String(body) };

export function createClient(options: ClientOptions): AssistantClient {
  const baseUrl = options.baseUrl.replace(/\/$/, '');
  const baseFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  let tokens = options.tokens;
  let refreshing: Promise<Tokens> | undefined;

  const adopt = (t: TokenResponse): TokenResponse => {
    tokens = {
      accessToken: t.accessToken,
      refreshToken: t.refreshToken,
      expiresAt: Date.now() + t.expiresIn * 1000,
    };
    options.onTokens?.(tokens);
    return t;
  };
  const end = () => {
    tokens = undefined;
    options.onTokens?.(undefined);
  };

  // Auth routes answer by their own rules (a 401 there is not an expired session).
  const isAuthRoute = (url: string) => new URL(url).pathname.startsWith('/api/auth/');

  async function authedFetch(request: Request): Promise<Response> {
    if (!tokens || request.headers.has('authorization') || isAuthRoute(request.url))
      return baseFetch(request);
    if (tokens.expiresAt !== undefined && Date.now() > tokens.expiresAt - REFRESH_MARGIN_MS)
      await client.refresh().catch(() => undefined);
    const retry = request.clone();
    const send = (r: Request) => {
      if (tokens) r.headers.set('authorization', `Bearer ${tokens.accessToken}`);
      return baseFetch(r);
    };
    const res = await send(request);
    if (res.status !== 401 || !tokens) return res;
    const body = (await res
      .clone()
      .json()
      .catch(() => null)) as { code?: string } | null;
    if (body?.code !== 'token_expired') return res;
    await client.refresh();
    return send(retry);
  }

  const api = createFetchClient<paths>({ baseUrl, fetch: authedFetch });

  async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await call;
    if (error !== undefined || !response.ok) throw new ApiError(problemOf(error, response.status));
    return data as T;
  }

  /** A token valid now (refreshed first when it is about to expire). */
  async function currentToken(): Promise<string> {
    if (!tokens) throw new ApiError(problemOf({ code: 'unauthenticated', title: 'Not signed in' }, 401));
    if (tokens.expiresAt !== undefined && Date.now() > tokens.expiresAt - REFRESH_MARGIN_MS)
      await client.refresh();
    return tokens.accessToken;
  }

  /** Connects a namespace; the token is read at each (re)connection, and a `token_expired` from
   * the server (it disconnects) refreshes the session and connects again. */
  async function connect<S extends Socket>(namespace: string, auth: Record<string, unknown>): Promise<S> {
    await currentToken();
    const socket = io(baseUrl + namespace, {
      auth: (cb) => cb({ ...auth, token: tokens?.accessToken }),
      transports: ['websocket'],
      forceNew: true,
    }) as unknown as S;
    const raw = socket as unknown as Socket;
    raw.on('chatError', (e: Problem) => {
      if (e.code !== 'token_expired') return;
      raw.once('disconnect', () => {
        client.refresh().then(
          () => raw.connect(),
          () => undefined,
        );
      });
    });
    await new Promise<void>((resolve, reject) => {
      raw.once('connect', () => resolve());
      raw.once('connect_error', (err: Error & { data?: Problem }) => {
        raw.close();
        reject(err.data ? new ApiError(err.data) : err);
      });
    });
    return socket;
  }

  const client: AssistantClient = {
    api,
    get tokens() {
      return tokens;
    },
    async login(email, password) {
      return adopt(
        await ok(
          api.POST('/api/auth/login', {
            body: { email, password, clientType: options.clientType ?? 'web_portal' },
          }),
        ),
      );
    },
    async register(email, password, name) {
      return adopt(await ok(api.POST('/api/auth/register', { body: { email, password, name } })));
    },
    refresh() {
      if (!tokens) return Promise.reject(new ApiError(problemOf({ code: 'unauthenticated' }, 401)));
      const refreshToken = tokens.refreshToken;
      refreshing ??= ok(api.POST('/api/auth/refresh', { body: { refreshToken } }))
        .then(
          (t) => {
            adopt(t);
            return tokens!;
          },
          (err: unknown) => {
            // A refused refresh token ends the session; a network failure keeps it for a retry.
            if (err instanceof ApiError) end();
            throw err;
          },
        )
        .finally(() => (refreshing = undefined));
      return refreshing;
    },
    async logout() {
      if (!tokens) return;
      const refreshToken = tokens.refreshToken;
      end();
      await ok(api.POST('/api/auth/logout', { body: { refreshToken } }));
    },
    async chat() {
      const socket = await connect<ChatSocket>('', {});
      return {
        socket,
        send: (message, opts = {}) => sendTurn(socket, message, opts),
        close: () => socket.close(),
      };
    },
    observer(observerId) {
      const auth = Array.isArray(observerId) ? { observerIds: observerId } : { observerId };
      return connect<ObserverSocket>('/observer', auth);
    },
  };

  async function sendTurn(socket: ChatSocket, message: string, opts: SendOptions): Promise<ChatTurn> {
    const clientMessageId = opts.clientMessageId ?? globalThis.crypto.randomUUID();
    const replies: AssistantResponse[] = [];
    // The turn's events arrive before its ack; those of another conversation are not this turn's.
    const mine = (conversationId: number) =>
      opts.conversationId === undefined || conversationId === opts.conversationId;
    const onDelta: ChatServerEvents['assistantResponseDelta'] = (e) => {
      if (mine(e.conversationId)) opts.onDelta?.(e.delta, e);
    };
    const onResponse: ChatServerEvents['assistantResponse'] = (e) => {
      if (mine(e.conversationId)) replies.push(e);
    };
    socket.on('assistantResponseDelta', onDelta);
    socket.on('assistantResponse', onResponse);
    try {
      const ack: ChatAck = await socket.timeout(options.ackTimeoutMs ?? 120_000).emitWithAck('chatMessage', {
        message,
        clientMessageId,
        ...(opts.conversationId !== undefined && { conversationId: opts.conversationId }),
        ...(opts.npcUserId !== undefined && { npcUserId: opts.npcUserId }),
        ...(opts.channelId !== undefined && { channelId: opts.channelId }),
        ...(opts.preferences && { preferences: opts.preferences }),
      });
      if (!ack.ok) throw new ApiError(ack.error);
      const { choices } = await ok(
        api.GET('/api/assistant/choices', { params: { query: { conversationId: ack.conversationId } } }),
      );
      return {
        conversationId: ack.conversationId,
        messageId: ack.messageId,
        replies: replies.filter((r) => r.conversationId === ack.conversationId),
        choices,
      };
    } finally {
      socket.off('assistantResponseDelta', onDelta);
      socket.off('assistantResponse', onResponse);
    }
  }

  return client;
}
