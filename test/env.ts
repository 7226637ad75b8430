/** The environment every test app starts from; tests override single variables. */
export function testEnv(
  overrides: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789',
    DATA_DIR: './data-test-unused',
    // A failsafe against a statement made outside its transaction (the tests of that case set
    // their own): on a busy shared machine a start-up waited longer than 3 s for the connection.
    DB_POOL_TIMEOUT_MS: '10000',
    DB_POOL_SIZE: '5',
    // Every test request comes from 127.0.0.1: the auth limit gets its own test with a low value.
    AUTH_RATE_LIMIT: '100000',
    ...overrides,
  };
}
