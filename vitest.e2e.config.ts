// `npm run test:e2e`: the web console driven in Debian's chromium (playwright-core) against the
// real server on PGlite with the offline models. One file at a time: one browser, one server.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    // A page answers when the server has: wait for it, don't race it (a hung check still fails).
    expect: { poll: { timeout: 15_000 } },
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['default'],
  },
});
