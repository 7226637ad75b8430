// Access tokens: HS256 JWTs (algorithm pinned) carrying the spec's payload (id, role, name,
// accountType) plus sub, iat, exp, iss, aud and jti.
import { randomUUID, webcrypto } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { AppError } from '../http/problem.js';
import { ACCOUNT_TYPES, ROLES, type AccountType, type Role } from './identity.rules.js';

export interface AccessClaims {
  id: number;
  role: Role;
  name: string;
  accountType: AccountType;
  jti: string;
  exp: number;
}

export interface JwtOptions {
  secret: string;
  issuer: string;
  audience: string;
  ttlSeconds: number;
}

export class AccessTokens {
  // Imported once: given raw bytes, jose imports the key again on every sign and verify, which
  // shows up on every authenticated request.
  private readonly key: Promise<webcrypto.CryptoKey>;
  constructor(private readonly opts: JwtOptions) {
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
    user: { id: number; role: Role; name: string; accountType: AccountType },
    ttlSeconds = this.opts.ttlSeconds,
  ) {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ id: user.id, role: user.role, name: user.name, accountType: user.accountType })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(user.id))
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .setIssuer(this.opts.issuer)
      .setAudience(this.opts.audience)
      .setJti(randomUUID())
      .sign(await this.key);
  }

  /** Verifies signature, algorithm, issuer, audience and expiry; throws the contract's 401s. */
  async verify(token: string): Promise<AccessClaims> {
    try {
      const { payload } = await jwtVerify(token, await this.key, {
        algorithms: ['HS256'],
        issuer: this.opts.issuer,
        audience: this.opts.audience,
        requiredClaims: ['exp', 'iat', 'jti', 'sub'],
      });
      const { id, role, name, accountType, jti, exp } = payload as Record<string, unknown>;
      if (
        typeof id !== 'number' ||
        !Number.isInteger(id) ||
        String(id) !== payload.sub ||
        !ROLES.includes(role as Role) ||
        !ACCOUNT_TYPES.includes(accountType as AccountType) ||
        typeof name !== 'string' ||
        typeof jti !== 'string' ||
        typeof exp !== 'number'
      )
        throw new AppError('unauthenticated', 'The access token is not valid');
      return { id, role: role as Role, name, accountType: accountType as AccountType, jti, exp };
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (err instanceof errors.JWTExpired)
        throw new AppError('token_expired', 'The access token has expired');
      throw new AppError('unauthenticated', 'The access token is not valid');
    }
  }
}
