// The JWT signing secret when the configuration gives none (development only: config.ts refuses
// to start in production without JWT_SECRET).
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';

/** A missing JWT_SECRET is generated once and kept in DATA_DIR (readable by the owner only), so
 * `npm start` needs no configuration and tokens survive restarts. */
export function resolveJwtSecret(config: Pick<Config, 'jwt' | 'dataDir'>): string {
  if (config.jwt.secret) return config.jwt.secret;
  mkdirSync(config.dataDir, { recursive: true });
  const path = join(config.dataDir, 'jwt-secret');
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(path, secret + '\n', { mode: 0o600 });
  chmodSync(path, 0o600);
  return secret;
}
