// Access tokens: HS256 JWTs (algorithm pinned) carrying the spec's payload (id, role, name,
// accountType) plus sub, iat, exp, iss, aud, jti, sid (the sign-in session: its refresh-token
// family, so ending the session ends its access tokens too) and clientType (the session's client
// type, spec: "tracked for analytics and context", so every request and socket knows it without a
// read). Signed with jose; verified synchronously with
// node:crypto's HMAC (every authenticated request verifies one: WebCrypto's asynchronous verify
// cost about half of a simple route's rate), under the same checks jose applied: the algorithm
// pinned to HS256, no critical header extension, the signature compared in constant time, then
// issuer, audience, expiry, not-before and the required claims.
//
// Key ids: a token's header names the key that signed it (`kid`), derived from the secret itself
// (keyId below), so a secret can be rotated without logging anyone out: the current secret
// (JWT_SECRET) signs, and the previous ones (JWT_PREVIOUS_SECRETS) still verify the tokens they
// signed until those expire. A kid no accepted key has is refused without a signature check. A
// token without a kid (signed before key ids) is checked against each accepted key.
import {
  createHmac,
  createSecretKey,
  randomUUID,
  timingSafeEqual,
  webcrypto,
  type KeyObject,
} from 'node:crypto';
import { SignJWT } from 'jose';
import { AppError } from '../http/problem.js';
import {
  ACCOUNT_TYPES,
  CLIENT_TYPES,
  ROLES,
  type AccountType,
  type ClientType,
  type Role,
} from './identity.rules.js';

export interface AccessClaims {
  id: number;
  role: Role;
  name: string;
  accountType: AccountType;
  jti: string;
  exp: number;
  /** The sign-in session (refresh-token family) the token was issued to. */
  sid: string | undefined;
  /** The client type its session signed in with; undefined in a token signed without one (none
   * of the service's sessions: a test's or a tool's token). */
  clientType: ClientType | undefined;
}

export interface JwtOptions {
  /** The current secret: it signs every new token. */
  secret: string;
  /** Earlier secrets still accepted for verification (none by default). */
  previousSecrets?: string[] | undefined;
  issuer: string;
  audience: string;
  ttlSeconds: number;
}

/** A secret's key id: the first 16 characters (96 bits) of HMAC-SHA256(secret, a fixed label) in
 * base64url. Derived, so nobody has to name the keys, and one-way: it says nothing of the secret. */
export function keyId(secret: string): string {
  return createHmac('sha256', secret)
    .update('assistant-platform access-token key id v1')
    .digest('base64url')
    .slice(0, 16);
}

export class AccessTokens {
  // Imported once: given raw bytes, jose imports the key again on every sign and verify, which
  // shows up on every authenticated request.
  private readonly key: Promise<webcrypto.CryptoKey>;
  /** The current key's id, written into every token signed here. */
  readonly kid: string;
  /** Every accepted key by its id, the current one first. KeyObjects made once: given bytes,
   * createHmac makes one on every call. */
  private readonly keys = new Map<string, KeyObject>();
  /** Verified tokens with the time (ms) they were verified: reused for VERIFIED_FOR_MS only. The
   * keys never change in a process, so a cached token stays as valid as when it was checked. */
  private readonly verified = new Map<string, { claims: AccessClaims; at: number }>();
  constructor(private readonly opts: JwtOptions) {
    this.kid = keyId(opts.secret);
    for (const secret of [opts.secret, ...(opts.previousSecrets ?? [])]) {
      const kid = keyId(secret);
      if (!this.keys.has(kid)) this.keys.set(kid, createSecretKey(Buffer.from(secret, 'utf8')));
    }
    this.key = webcrypto.subtle.importKey(
      'raw',
      new TextEncoder().encode(opts.secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    );
  }

  get ttlSeconds() {
    return this.opts.ttlSeconds;
  }

  async sign(
    user: { id: number; role: Role; name: string; accountType: AccountType; clientType?: ClientType },
    ttlSeconds = this.opts.ttlSeconds,
    sessionId?: string,
  ) {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      id: user.id,
      role: user.role,
      name: user.name,
      accountType: user.accountType,
      ...(sessionId ? { sid: sessionId } : {}),
      ...(user.clientType ? { clientType: user.clientType } : {}),
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: this.kid })
      .setSubject(String(user.id))
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .setIssuer(this.opts.issuer)
      .setAudience(this.opts.audience)
      .setJti(randomUUID())
      .sign(await this.key);
  }

  /** Verifies signature, algorithm, issuer, audience and expiry; throws the contract's 401s.
   * Synchronous: every authenticated request runs it. A token verified before is answered from
   * the cache of verified tokens (keyed by the whole token, so any other byte misses it) with only
   * its expiry checked again, for VERIFIED_FOR_MS: a client sends the same token with every
   * request, and the HMAC and JSON decoding cost as much as a simple route. (Whether its session
   * and account still exist is the account state's to say, on every request.) */
  verify(token: string): AccessClaims {
    const known = this.verified.get(token);
    const now = Date.now();
    if (known && now - known.at < VERIFIED_FOR_MS) {
      if (known.claims.exp > Math.floor(now / 1000)) return known.claims;
      this.verified.delete(token);
      throw new AppError('token_expired', 'The access token has expired');
    }
    if (known) this.verified.delete(token);
    const claims = this.check(token);
    if (this.verified.size >= VERIFIED_CACHE_SIZE) {
      // The oldest first: Map keeps insertion order.
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
    this.verified.set(token, { claims, at: now });
    return claims;
  }

  private check(token: string): AccessClaims {
    const invalid = () => new AppError('unauthenticated', 'The access token is not valid');
    const parts = token.split('.');
    if (parts.length !== 3 || !parts.every((p) => BASE64URL.test(p))) throw invalid();
    const [head, body, signature] = parts as [string, string, string];
    const header = decodeJson(head);
    if (!header || header.alg !== 'HS256' || 'crit' in header || ('b64' in header && header.b64 !== true))
      throw invalid();
    if (!this.signedByAcceptedKey(header.kid, `${head}.${body}`, Buffer.from(signature, 'base64url')))
      throw invalid();
    const payload = decodeJson(body);
    if (!payload) throw invalid();
    const { id, role, name, accountType, jti, exp, iat, nbf, sub, iss, aud, sid, clientType } = payload;
    const now = Math.floor(Date.now() / 1000);
    if (
      iss !== this.opts.issuer ||
      !(aud === this.opts.audience || (Array.isArray(aud) && aud.includes(this.opts.audience))) ||
      typeof iat !== 'number' ||
      (nbf !== undefined && (typeof nbf !== 'number' || nbf > now)) ||
      typeof exp !== 'number' ||
      typeof sub !== 'string' ||
      typeof jti !== 'string' ||
      (sid !== undefined && typeof sid !== 'string')
    )
      throw invalid();
    if (exp <= now) throw new AppError('token_expired', 'The access token has expired');
    if (
      typeof id !== 'number' ||
      !Number.isInteger(id) ||
      String(id) !== sub ||
      !ROLES.includes(role as Role) ||
      !ACCOUNT_TYPES.includes(accountType as AccountType) ||
      typeof name !== 'string' ||
      (clientType !== undefined && !CLIENT_TYPES.includes(clientType as ClientType))
    )
      throw invalid();
    return {
      id,
      role: role as Role,
      name,
      accountType: accountType as AccountType,
      jti,
      exp,
      sid,
      clientType: clientType as ClientType | undefined,
    };
  }

  /** Whether the signature is the HMAC of `input` under the key the kid names, or, for a token
   * without a kid, under any accepted key. A kid that is not a string, or names no accepted key
   * (an unknown key, or one removed from the configuration), verifies nothing. */
  private signedByAcceptedKey(kid: unknown, input: string, given: Buffer): boolean {
    if (kid !== undefined && typeof kid !== 'string') return false;
    const key = kid === undefined ? undefined : this.keys.get(kid);
    if (kid !== undefined && !key) return false;
    for (const candidate of key ? [key] : this.keys.values()) {
      const expected = createHmac('sha256', candidate).update(input).digest();
      if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
    }
    return false;
  }
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** Verified tokens remembered (about 1 KB each); the oldest go first. */
const VERIFIED_CACHE_SIZE = 10_000;
/** How long a verified token is reused without checking it again. */
const VERIFIED_FOR_MS = 10_000;

/** A base64url JSON object, or null when it is not one. */
function decodeJson(part: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
