import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { attemptOutcome, matches, newSecret, payload, sign, signedHeaders } from './webhooks.rules.js';
import { deriveSecretKey, openSecret, sealSecret } from './webhooks.secrets.js';

describe('matches', () => {
  it.each([
    [['instance_created'], null, 'instance_created', 1, true],
    [['instance_created'], null, 'diary_entry', 1, false],
    [['*'], null, 'diary_entry', 1, true],
    [['diary_entry', 'instance_created'], 7, 'diary_entry', 7, true],
    [['diary_entry'], 7, 'diary_entry', 8, false],
    [['*'], 7, 'anything', 7, true],
  ] as const)(
    'types %j, observer %s ← %s of observer %s: %s',
    (eventTypes, observerId, eventType, of, expected) => {
      expect(matches({ eventTypes, observerId }, { eventType, observerId: of })).toBe(expected);
    },
  );
});

describe('Standard Webhooks signature', () => {
  it('signs "id.timestamp.body" with the base64 key of whsec_ (the specification’s example)', () => {
    expect(
      sign(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('sends the id, the timestamp in seconds and the signature', () => {
    const secret = newSecret();
    expect(signedHeaders(secret, 'd-1', 1700000000, '{}')).toEqual({
      'content-type': 'application/json',
      'user-agent': 'assistant-platform-webhooks',
      'webhook-id': 'd-1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': sign(secret, 'd-1', 1700000000, '{}'),
    });
  });

  it('makes secrets of 32 random bytes behind whsec_', () => {
    const a = newSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(newSecret()).not.toBe(a);
  });

  it('puts the event in { type, timestamp, data }', () => {
    expect(JSON.parse(payload('diary_entry', '2025-01-01T00:00:00.000Z', { id: 4 }))).toEqual({
      type: 'diary_entry',
      timestamp: '2025-01-01T00:00:00.000Z',
      data: { id: 4 },
    });
  });
});

describe('attemptOutcome', () => {
  it.each([
    [{ status: 200 }, false, 'succeeded'],
    [{ status: 204 }, true, 'succeeded'],
    [{ status: 500 }, false, 'retry'],
    [{ status: 500 }, true, 'failed'],
    [{ status: 302 }, false, 'retry'],
    [{ status: 410 }, false, 'retry'],
    [{ error: 'timeout', retryable: true }, false, 'retry'],
    [{ error: 'timeout', retryable: true }, true, 'failed'],
    [{ error: 'blocked_address', retryable: false }, false, 'failed'],
  ] as const)('%j (final: %s) → %s', (result, final, expected) => {
    expect(attemptOutcome(result, final)).toBe(expected);
  });
});

describe('stored secrets', () => {
  const key = deriveSecretKey('test-secret-test-secret-test-secret-0123456789');

  it('derive a 32-byte key of their own from the JWT secret', () => {
    expect(key).toHaveLength(32);
    expect(deriveSecretKey('test-secret-test-secret-test-secret-0123456789').equals(key)).toBe(true);
    expect(deriveSecretKey('another-secret-another-secret-another').equals(key)).toBe(false);
  });

  it('open with the key and the webhook’s id only, and never hold the secret in clear', () => {
    const sealed = sealSecret(key, 'whsec_abc', 'hook-1');
    expect(sealed).not.toContain('abc');
    expect(openSecret(key, sealed, 'hook-1')).toBe('whsec_abc');
    expect(sealSecret(key, 'whsec_abc', 'hook-1')).not.toBe(sealed);
    expect(() => openSecret(key, sealed, 'hook-2')).toThrow();
    expect(() => openSecret(deriveSecretKey('x'.repeat(40)), sealed, 'hook-1')).toThrow();
  });
});

describe('configuration', () => {
  it('lets outbound URLs reach loopback in tests only', () => {
    expect(
      loadConfig({ NODE_ENV: 'test', SSRF_ALLOW_LOOPBACK_FOR_TESTS: 'true' }).allowLoopbackTargetsForTests,
    ).toBe(true);
    expect(loadConfig({}).allowLoopbackTargetsForTests).toBe(false);
    expect(() => loadConfig({ SSRF_ALLOW_LOOPBACK_FOR_TESTS: 'true' })).toThrow(
      /only allowed when NODE_ENV=test/,
    );
    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        JWT_SECRET: 'x'.repeat(40),
        SSRF_ALLOW_LOOPBACK_FOR_TESTS: 'true',
      }),
    ).toThrow(/SSRF_ALLOW_LOOPBACK_FOR_TESTS/);
  });

  it('takes a 32-byte WEBHOOK_SECRET_KEY', () => {
    const good = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ WEBHOOK_SECRET_KEY: good }).webhooks.secretKey).toEqual(Buffer.alloc(32, 7));
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY: 'c2hvcnQ=' })).toThrow(/WEBHOOK_SECRET_KEY/);
  });
});
