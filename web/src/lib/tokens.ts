// Tokens the way the OAuth BCP for browser apps advises: the access token lives only in memory
// (this object); the refresh token is rotated by the server on every use and kept in
// sessionStorage, so a reload of the tab keeps the session and closing the tab ends it. One
// refresh at a time: concurrent callers share it, since presenting a spent refresh token makes
// the server revoke the whole family.

export interface TokenResponse {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  user: SessionUser;
}

export interface SessionUser {
  id: number;
  email: string;
  name: string;
  role: string;
  accountType: string;
  emailVerified?: boolean;
}

export interface TokenStoreDeps {
  /** POST /api/auth/refresh; resolves the new pair or null when the server refused it. */
  refresh: (refreshToken: string) => Promise<TokenResponse | null>;
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  now: () => number;
}

const KEY = 'assistant.refreshToken';
/** Refresh this long before the access token expires (a quarter of a short lifetime). */
const EARLY_MS = 30_000;

export class TokenStore {
  private access: string | null = null;
  private expiresAt = 0;
  private earlyMs = EARLY_MS;
  private inflight: Promise<string | null> | null = null;
  private listeners = new Set<(user: SessionUser | null) => void>();
  user: SessionUser | null = null;

  constructor(private readonly deps: TokenStoreDeps) {}

  hasSession(): boolean {
    return this.access !== null || this.deps.storage.getItem(KEY) !== null;
  }

  /** Takes a token response (sign in, register, code exchange, refresh). */
  accept(res: TokenResponse): void {
    this.access = res.accessToken;
    this.expiresAt = this.deps.now() + res.expiresIn * 1000;
    this.earlyMs = Math.min(EARLY_MS, (res.expiresIn * 1000) / 4);
    this.deps.storage.setItem(KEY, res.refreshToken);
    this.user = res.user;
    for (const l of this.listeners) l(this.user);
  }

  /** Forgets everything (sign out, refused refresh). */
  clear(): void {
    const had = this.user !== null || this.access !== null;
    this.access = null;
    this.expiresAt = 0;
    this.user = null;
    this.deps.storage.removeItem(KEY);
    if (had) for (const l of this.listeners) l(null);
  }

  refreshToken(): string | null {
    return this.deps.storage.getItem(KEY);
  }

  onChange(listener: (user: SessionUser | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A valid access token, refreshed first when it is missing or about to expire; null when
   * there is no session. */
  async accessToken(): Promise<string | null> {
    if (this.access && this.deps.now() < this.expiresAt - this.earlyMs) return this.access;
    return this.refresh();
  }

  /** Rotates the refresh token now (also after the server said `token_expired`). */
  refresh(): Promise<string | null> {
    this.inflight ??= this.doRefresh().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async doRefresh(): Promise<string | null> {
    const stored = this.deps.storage.getItem(KEY);
    if (!stored) {
      this.clear();
      return null;
    }
    let res: TokenResponse | null;
    try {
      res = await this.deps.refresh(stored);
    } catch {
      // Network trouble: keep the refresh token for the next try, but no access token now.
      return null;
    }
    if (!res) {
      this.clear();
      return null;
    }
    this.accept(res);
    return res.accessToken;
  }
}

/** The contract's admin rule as the token shows it: `cso`, or `silicon` + `developer`. */
export const isAdmin = (u: SessionUser) =>
  u.role === 'cso' || (u.role === 'silicon' && u.accountType === 'developer');
