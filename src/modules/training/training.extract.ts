// Document extraction off the event loop: a small pool of worker threads running
// training.extract-worker.mjs (unpdf for PDF, mammoth for DOCX, UTF-8 decoding for text, then
// normalisation). Opening a 300-page PDF and extracting its text costs a second of CPU, its
// normalisation a tenth; on the main thread they would stall every request. Each worker does one request at a time; workers start on demand, stop after a while
// idle, and a request that runs too long (a pathological file) ends its worker.
import { Worker } from 'node:worker_threads';

export interface ExtractRequest {
  op: 'inspect' | 'extract';
  type: 'pdf' | 'docx' | 'text';
  data: Uint8Array;
  /** `extract`: characters of the normalised text kept. */
  maxChars?: number;
}

export interface ExtractResult {
  /** A PDF's page count (null for the others). */
  pages: number | null;
  /** `extract`: the text, normalised (training.text.mjs) and cut to `maxChars`; else null. */
  text: string | null;
  /** Whether the text was cut. */
  truncated: boolean;
}

/** The file could not be read as its type (or its reading failed): the caller's 400. */
export class ExtractionError extends Error {
  override name = 'ExtractionError';
  constructor(
    message: string,
    /** The file expands past a bound of training.bounds.mjs (the caller's 413). */
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

interface Task {
  req: ExtractRequest;
  timeoutMs: number;
  resolve: (r: ExtractResult) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  timer: NodeJS.Timeout | undefined;
}

export interface ExtractorOptions {
  /** Workers at most (each one request at a time). */
  size: number;
  /** An idle worker stops after this long. */
  idleMs: number;
  /** Heap limit of a worker, MB: a file that needs more fails instead of the process. */
  heapMb: number;
}

export class Extractor {
  private readonly slots = new Set<Slot>();
  private readonly queue: Task[] = [];
  private closed = false;

  constructor(private readonly opts: ExtractorOptions = { size: 2, idleMs: 30_000, heapMb: 1024 }) {}

  run(req: ExtractRequest, timeoutMs: number): Promise<ExtractResult> {
    if (this.closed) return Promise.reject(new Error('the extractor is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ req, timeoutMs, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = [...this.slots].find((s) => s.task === null);
      if (!slot) {
        if (this.slots.size >= this.opts.size) return;
        slot = this.spawn();
      }
      this.start(slot, this.queue.shift()!);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(new URL('./training.extract-worker.mjs', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: this.opts.heapMb },
    });
    const slot: Slot = { worker, task: null, timer: undefined };
    this.slots.add(slot);
    const fail = (err: Error) => {
      this.slots.delete(slot);
      clearTimeout(slot.timer);
      const task = slot.task;
      slot.task = null;
      task?.reject(err);
      this.dispatch();
    };
    worker.on('error', (err) => fail(new ExtractionError(`the file could not be read: ${err.message}`)));
    worker.on('exit', () => {
      if (this.slots.has(slot)) fail(new ExtractionError('the file could not be read (its reader stopped)'));
    });
    worker.on(
      'message',
      (msg: {
        ok: boolean;
        pages?: number | null;
        text?: string | null;
        truncated?: boolean;
        error?: string;
        tooLarge?: boolean;
      }) => {
        const task = slot.task;
        if (!task) return;
        clearTimeout(slot.timer);
        slot.task = null;
        if (msg.ok)
          task.resolve({
            pages: msg.pages ?? null,
            text: msg.text ?? null,
            truncated: msg.truncated ?? false,
          });
        else task.reject(new ExtractionError(msg.error ?? 'unreadable', msg.tooLarge ?? false));
        if (msg.ok) this.idle(slot);
        else {
          // A file that failed may have left its worker holding much memory: it goes with it.
          this.slots.delete(slot);
          void slot.worker.terminate();
        }
        this.dispatch();
      },
    );
    return slot;
  }

  private start(slot: Slot, task: Task): void {
    clearTimeout(slot.timer);
    slot.task = task;
    slot.worker.ref();
    slot.timer = setTimeout(() => {
      // Too long: the worker is ended (its exit fails the task) and a new one serves the queue.
      this.slots.delete(slot);
      slot.task = null;
      task.reject(new ExtractionError(`the file could not be read within ${task.timeoutMs / 1000} s`));
      void slot.worker.terminate();
      this.dispatch();
    }, task.timeoutMs);
    // A copy: the caller keeps its bytes (they are stored with the job).
    slot.worker.postMessage(task.req);
  }

  /** An idle worker keeps no process alive and stops after `idleMs`. */
  private idle(slot: Slot): void {
    slot.worker.unref();
    slot.timer = setTimeout(() => {
      if (slot.task !== null) return;
      this.slots.delete(slot);
      void slot.worker.terminate();
    }, this.opts.idleMs);
    slot.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.queue.splice(0)) task.reject(new Error('the extractor is closed'));
    const slots = [...this.slots];
    this.slots.clear();
    for (const s of slots) {
      clearTimeout(s.timer);
      s.task?.reject(new Error('the extractor is closed'));
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}
