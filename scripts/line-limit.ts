// Fails when a source file is longer than 450 lines (generated files aside): a file that long
// almost always does more than one job, and splitting it is cheapest before it grows further.
// Run by `npm run lint` (and so by CI).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const LIMIT = 450;
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => /\.(ts|tsx|mts|js|mjs)$/.test(f) && !f.endsWith('.generated.ts'));

const over = files
  .map((file) => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return { file, lines: 0 }; // listed by git but deleted in the work tree
    }
    return { file, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) };
  })
  .filter((f) => f.lines > LIMIT)
  .sort((a, b) => b.lines - a.lines);

if (over.length) {
  for (const f of over) console.error(`${f.file}: ${f.lines} lines (limit ${LIMIT})`);
  console.error(`${over.length} file(s) over ${LIMIT} lines: split each by what it does`);
  process.exit(1);
}
console.log(`line limit: ${files.length} files, none over ${LIMIT} lines`);
