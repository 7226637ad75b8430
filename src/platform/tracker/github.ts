// The issue tracker: GitHub's REST issues API (`POST /repos/{owner}/{repo}/issues`). One call, one
// answer sorted into created, to be retried or failed; the caller (a job) does the retrying.
//
// The token lives only in this closure's request headers: the returned object has no property
// holding it, so logging the tracker, or any error or outcome it gives, never shows it.

export interface GitHubIssuesOptions {
  /** A token that may create issues in the repository (sent as a bearer token). */
  token: string;
  /** `owner/name`. */
  repo: string;
  /** `https://api.github.com`, or a GitHub Enterprise Server's `/api/v3` (tests: a local fake). */
  apiUrl: string;
  /** Time for the whole call, answer included. */
  timeoutMs?: number;
}

export interface NewIssue {
  title: string;
  body: string;
}

/** What one call came to. `retryable`: a later attempt may succeed (a 5xx, a 408, a rate limit,
 * a network failure or timeout); otherwise (bad credentials, no such repository, a refused body)
 * it would meet the same answer. `error` never holds the token. */
export type CreateIssueOutcome =
  | { kind: 'created'; number: number; url: string }
  | { kind: 'failed'; retryable: boolean; status: number | null; error: string };

export interface IssueTracker {
  /** `owner/name`, for logs. */
  readonly repo: string;
  create(issue: NewIssue): Promise<CreateIssueOutcome>;
}

const MESSAGE_BYTES = 200;

/** Whether an answer other than 201 is worth another attempt. GitHub answers its rate limits 429,
 * or 403 with `x-ratelimit-remaining: 0` or a `retry-after` (secondary limits); any other 4xx is
 * the request's own fault. */
export function retryableStatus(status: number, headers: Pick<Headers, 'get'>): boolean {
  if (status >= 500 || status === 408 || status === 429) return true;
  return (
    status === 403 && (headers.get('x-ratelimit-remaining') === '0' || headers.get('retry-after') !== null)
  );
}

export function gitHubIssues(o: GitHubIssuesOptions): IssueTracker {
  const endpoint = `${o.apiUrl.replace(/\/$/, '')}/repos/${o.repo}/issues`;
  const headers = {
    accept: 'application/vnd.github+json',
    authorization: `Bearer ${o.token}`,
    'content-type': 'application/json',
    'user-agent': 'assistant-platform-tracker',
    'x-github-api-version': '2022-11-28',
  };
  return {
    repo: o.repo,
    async create(issue) {
      let res: Response;
      let text: string;
      try {
        res = await fetch(endpoint, {
          method: 'POST',
          headers,
          body: JSON.stringify({ title: issue.title, body: issue.body }),
          signal: AbortSignal.timeout(o.timeoutMs ?? 10_000),
        });
        text = await res.text();
      } catch (err) {
        // fetch's TypeError says "fetch failed"; the reason (ECONNREFUSED, a timeout) is its cause.
        // A timeout is a DOMException named TimeoutError.
        const code = (err as { cause?: { code?: unknown } }).cause?.code;
        const reason = typeof code === 'string' ? code : err instanceof Error ? err.message : 'unknown error';
        return { kind: 'failed', retryable: true, status: null, error: `no answer: ${reason}` };
      }
      let body: { number?: unknown; html_url?: unknown; message?: unknown } = {};
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        // not JSON: reported by its status alone
      }
      if (res.status === 201) {
        if (typeof body.number === 'number' && typeof body.html_url === 'string')
          return { kind: 'created', number: body.number, url: body.html_url };
        // Created, most likely, but unreadable: another attempt would file a second issue.
        return {
          kind: 'failed',
          retryable: false,
          status: 201,
          error: 'answered 201 without number and html_url',
        };
      }
      const message = typeof body.message === 'string' ? `: ${body.message.slice(0, MESSAGE_BYTES)}` : '';
      return {
        kind: 'failed',
        retryable: retryableStatus(res.status, res.headers),
        status: res.status,
        error: `answered ${res.status}${message}`,
      };
    },
  };
}
