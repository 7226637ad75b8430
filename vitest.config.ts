import { defineConfig } from 'vitest/config';

const include = ['src/**/*.test.ts', 'test/**/*.test.ts', 'web/src/**/*.test.ts'];
// Files that fake the process's timers: a module loaded (or a timer started) while they are
// faked would keep the fake for every later file of the same process.
const fakeTimers = ['src/platform/models/models.test.ts', 'src/platform/realtime/socket-server.test.ts'];

export default defineConfig({
  // Each lane keeps its own files' durations, by which vitest starts the longest files first: the
  // files the Postgres lane skips (data-dir.test.ts, disk-full.test.ts, their children the longest
  // of the embedded lane) took no time there, so the embedded lane after it started them last,
  // and they made its tail.
  cacheDir: process.env.DATABASE_URL ? 'node_modules/.vite/postgres-lane' : 'node_modules/.vite',
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        // A worker runs its files one after another in one process, importing the service's
        // modules once (each file still builds its own app and database): importing them afresh
        // for each of a hundred files took a sixth of the suite's time.
        test: { name: 'shared', include, exclude: fakeTimers, isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: fakeTimers } },
    ],
  },
});
