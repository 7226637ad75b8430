// The training extractor in a process of its own (test/bounded-work.test.ts runs it), so that its
// memory is measured alone: a DOCX read once (the workers' code loaded), then zip-bomb DOCX files
// read at once. Prints { before, peak, after, results } as JSON: resident set sizes in MB, and
// each bomb's outcome.
import { Extractor, ExtractionError } from '../src/modules/training/training.extract.js';
import { buildDocx, buildZipBomb } from './documents.js';

const [bombs, bytes] = [Number(process.argv[2] ?? 3), Number(process.argv[3] ?? 512 * 1024 * 1024)];
const mb = () => Math.round(process.memoryUsage.rss() / 1024 / 1024);
const extractor = new Extractor({ size: bombs, idleMs: 60_000, heapMb: 1024 });
const bomb = await buildZipBomb(bytes);
const docx = await buildDocx(['The lighthouse keeper counts the ships.']);
await Promise.all(
  Array.from({ length: bombs }, () => extractor.run({ op: 'extract', type: 'docx', data: docx }, 60_000)),
);
const before = mb();
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, mb())), 2);
const results = await Promise.all(
  Array.from({ length: bombs }, () =>
    extractor.run({ op: 'inspect', type: 'docx', data: bomb }, 60_000).then(
      () => 'read',
      (err: unknown) => (err instanceof ExtractionError && err.tooLarge ? 'too large' : String(err)),
    ),
  ),
);
clearInterval(sampler);
peak = Math.max(peak, mb());
const after = mb();
await extractor.close();
process.stdout.write(JSON.stringify({ before, peak, after, results, bombBytes: bomb.length }) + '\n');
