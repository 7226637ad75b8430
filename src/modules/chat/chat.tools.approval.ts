// The game's approval of an economy tool change (TOOL_APPROVAL_URL): the change is POSTed there,
// signed as webhooks are (Standard Webhooks headers, HMAC-SHA256 with TOOL_APPROVAL_SECRET), and
// approved only by a 2xx answer within the timeout. Any other answer, a timeout or a network
// failure is a refusal: the change is not applied.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { SafeFetchError, safePost } from '../../platform/http/safe-fetch.js';
import { signedHeaders } from '../webhooks/index.js';
import type { ToolApprover } from './chat.tools.js';

export const TOOL_APPROVAL_EVENT = 'tool.approval';

export function toolApprover(
  o: { url: string; secret: string; timeoutMs: number; allowLoopbackForTests: boolean },
  log: Logger,
): ToolApprover {
  return async (change) => {
    const id = `tool_${randomUUID()}`;
    const body = JSON.stringify({
      type: TOOL_APPROVAL_EVENT,
      timestamp: new Date().toISOString(),
      data: change,
    });
    try {
      const res = await safePost(o.url, {
        headers: signedHeaders(o.secret, id, Math.floor(Date.now() / 1000), body),
        body,
        timeoutMs: o.timeoutMs,
        keepBytes: 200,
        allowLoopbackFirstHopForTests: o.allowLoopbackForTests,
      });
      return res.status >= 200 && res.status < 300;
    } catch (err) {
      if (!(err instanceof SafeFetchError)) throw err;
      log.warn({ reason: err.reason, tool: change.tool }, 'tool approval not reached: the change is refused');
      return false;
    }
  };
}
