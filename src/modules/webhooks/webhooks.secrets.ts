// The endpoints' signing secrets at rest. They must be read back to sign every delivery, so they
// cannot be hashed like API keys; they are encrypted instead (AES-256-GCM, a random 96-bit nonce
// each, the webhook's id as associated data so a ciphertext copied to another row does not open).
// A database dump, a backup or a read replica then holds nothing a forger could use. The key is
// WEBHOOK_SECRET_KEY, or else derived from the JWT secret (HKDF-SHA256, its own label), which a
// deployment protects already; rotating that secret without setting WEBHOOK_SECRET_KEY makes the
// stored secrets unreadable (deliveries then fail until each secret is rotated).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

export function deriveSecretKey(jwtSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', jwtSecret, '', 'assistant-platform webhook secrets v1', 32));
}

export function sealSecret(key: Buffer, secret: string, webhookId: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(webhookId));
  const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url')}`;
}

/** The secret, or throws when the ciphertext does not open with this key and id. */
export function openSecret(key: Buffer, sealed: string, webhookId: string): string {
  const [version, data] = sealed.split('.');
  if (version !== VERSION || !data) throw new Error('unknown webhook secret format');
  const raw = Buffer.from(data, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(webhookId));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
