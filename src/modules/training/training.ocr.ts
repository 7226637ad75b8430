// OCR of screenshots with tesseract.js, which runs recognition in a worker thread of its own (the
// service's event loop only hands it the bytes). The language data ships in npm packages
// (`@tesseract.js-data/eng`, `/fra`): one directory (`langPath`) links to each package's gzipped
// file, and the unpacked data is written once, atomically, into a cache directory named by the
// packages' versions, which tesseract.js only reads (`cacheMethod: 'readOnly'`). Nothing is ever downloaded. A worker per
// language set is kept while in use and ended after a while idle.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, symlink, writeFile, copyFile, unlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { createWorker, type Worker as TesseractWorker } from 'tesseract.js';
import { SHIPPED_LANGUAGES, type OcrLanguage } from './training.rules.js';

const gunzipAsync = promisify(gunzip);
const require = createRequire(import.meta.url);

/** The shipped data file of a language, and its package's version (the cache is per version). */
function languageData(lang: OcrLanguage): { file: string; version: string } {
  const pkg = require.resolve(`@tesseract.js-data/${lang}/package.json`);
  const { version } = require(pkg) as { version: string };
  return { file: join(dirname(pkg), '4.0.0', `${lang}.traineddata.gz`), version };
}

export interface OcrResult {
  text: string;
  /** Tesseract's mean word confidence, 0–1. */
  confidence: number;
}

interface Entry {
  worker: Promise<TesseractWorker>;
  busy: number;
  timer: NodeJS.Timeout | undefined;
}

export class OcrEngine {
  private prepared: Promise<{ langPath: string; cachePath: string }> | undefined;
  private readonly workers = new Map<string, Entry>();

  constructor(private readonly opts: { cacheDir: string; idleMs: number }) {}

  /** The language directory and the unpacked cache (named by the data packages' versions), made
   * once per process; several processes may race to make them: each file appears by a rename. */
  private prepare(): Promise<{ langPath: string; cachePath: string }> {
    this.prepared ??= (async () => {
      const data = SHIPPED_LANGUAGES.map((lang) => ({ lang, ...languageData(lang) }));
      const langPath = join(this.opts.cacheDir, 'lang');
      const cachePath = join(
        this.opts.cacheDir,
        `data-${data.map((d) => `${d.lang}${d.version}`).join('-')}`,
      );
      await mkdir(langPath, { recursive: true });
      await mkdir(cachePath, { recursive: true });
      const place = async (path: string, make: (tmp: string) => Promise<void>) => {
        if (existsSync(path)) return;
        const tmp = `${path}.${randomBytes(4).toString('hex')}`;
        await make(tmp);
        await rename(tmp, path).catch(async (err: unknown) => {
          await unlink(tmp).catch(() => undefined);
          if (!existsSync(path)) throw err;
        });
      };
      for (const { lang, file } of data) {
        await place(join(langPath, `${lang}.traineddata.gz`), (tmp) =>
          symlink(file, tmp).catch(() => copyFile(file, tmp)),
        );
        // zlib runs on libuv's thread pool: the event loop stays free while it unpacks.
        await place(join(cachePath, `${lang}.traineddata`), async (tmp) =>
          writeFile(tmp, await gunzipAsync(await readFile(file))),
        );
      }
      return { langPath, cachePath };
    })();
    this.prepared.catch(() => (this.prepared = undefined));
    return this.prepared;
  }

  private entry(languages: readonly OcrLanguage[]): Entry {
    const key = languages.join('+');
    let e = this.workers.get(key);
    if (!e) {
      const worker = (async () => {
        const { langPath, cachePath } = await this.prepare();
        return createWorker([...languages], 1, { langPath, cachePath, cacheMethod: 'readOnly', gzip: true });
      })();
      e = { worker, busy: 0, timer: undefined };
      this.workers.set(key, e);
      const entry = e;
      worker.catch(() => {
        if (this.workers.get(key) === entry) this.workers.delete(key);
      });
    }
    return e;
  }

  async recognize(image: Buffer, languages: readonly OcrLanguage[]): Promise<OcrResult> {
    const key = languages.join('+');
    const e = this.entry(languages);
    clearTimeout(e.timer);
    e.busy++;
    try {
      const worker = await e.worker;
      const { data } = await worker.recognize(image);
      return { text: data.text, confidence: Math.max(0, Math.min(1, data.confidence / 100)) };
    } finally {
      e.busy--;
      if (e.busy === 0 && this.workers.get(key) === e) {
        e.timer = setTimeout(() => {
          if (e.busy > 0 || this.workers.get(key) !== e) return;
          this.workers.delete(key);
          void e.worker.then((w) => w.terminate()).catch(() => undefined);
        }, this.opts.idleMs);
        e.timer.unref();
      }
    }
  }

  async close(): Promise<void> {
    const entries = [...this.workers.values()];
    this.workers.clear();
    for (const e of entries) clearTimeout(e.timer);
    await Promise.all(entries.map((e) => e.worker.then((w) => w.terminate()).catch(() => undefined)));
  }
}
