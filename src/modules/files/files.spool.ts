// An upload's body read as it arrives, never held whole: each file part goes to a temporary file,
// its bytes counted against the caller's room (the quota, less what they store and what their
// other uploads in flight already took) as they come, so a body is refused (413) at the byte that
// passes it. Once the body has ended, the upload's files are read back and stored, one upload at
// a time in this process (the uploads of all users otherwise held their bodies in memory together
// while they waited for the database).
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../platform/http/problem.js';

/** The bytes of uploads being read, by account (this process's). */
const inFlight = new Map<number, number>();

export const quotaExceeded = (quota: number, used: number, bytes?: number) =>
  new AppError(
    'payload_too_large',
    `${bytes === undefined ? 'This upload' : `These files (${bytes} bytes)`} would take your stored uploads past the quota of ${quota} bytes (${used} used); delete an upload or wait for old ones to expire`,
    { quota, used },
  );

export class UploadSpool {
  private readonly files: { name: string | undefined; path: string }[] = [];
  private taken = 0;

  private constructor(
    private readonly userId: number,
    private readonly dir: string,
    /** Stored bytes of the account when the upload began, and its quota. */
    private readonly used: number,
    private readonly quota: number,
  ) {}

  static async open(userId: number, used: number, quota: number): Promise<UploadSpool> {
    return new UploadSpool(userId, await mkdtemp(join(tmpdir(), 'ap-upload-')), used, quota);
  }

  /** Counts `n` more bytes of this upload; 413 past the account's room. */
  private take(n: number): void {
    const others = (inFlight.get(this.userId) ?? 0) - this.taken;
    if (this.used + others + this.taken + n > this.quota) throw quotaExceeded(this.quota, this.used + others);
    this.taken += n;
    inFlight.set(this.userId, others + this.taken);
  }

  /** Writes one file part to disk as it is read. */
  async add(name: string | undefined, file: Readable): Promise<void> {
    const path = join(this.dir, String(this.files.length));
    const count = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        try {
          this.take(chunk.length);
          done(null, chunk);
        } catch (err) {
          done(err as Error);
        }
      },
    });
    await pipeline(file, count, createWriteStream(path, { mode: 0o600 }));
    this.files.push({ name, path });
  }

  /** The files, read back (once the body has ended, under `storing`). */
  read(): Promise<{ name: string | undefined; data: Buffer }[]> {
    return Promise.all(this.files.map(async (f) => ({ name: f.name, data: await readFile(f.path) })));
  }

  /** Removes the files and gives the bytes back to the account's room. */
  async close(): Promise<void> {
    const left = (inFlight.get(this.userId) ?? 0) - this.taken;
    if (left > 0) inFlight.set(this.userId, left);
    else inFlight.delete(this.userId);
    this.taken = 0;
    await rm(this.dir, { recursive: true, force: true });
  }
}

let storing: Promise<unknown> = Promise.resolve();

/** Runs `fn` once every upload stored before it in this process is done: one at a time. */
export function oneAtATime<T>(fn: () => Promise<T>): Promise<T> {
  const run = storing.then(fn, fn);
  // The queue goes on after a failed upload; its caller gets the failure through `run`.
  storing = run.catch(() => undefined);
  return run;
}
