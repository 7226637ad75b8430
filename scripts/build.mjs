// `npm run build`: compiles the service (src/, tests and fixtures left out) into plain JavaScript
// in dist/, file for file, so `node dist/main.js` runs it without a TypeScript loader. dist/ sits
// beside src/ at the same depth, so every path a module resolves from its own place (the
// migrations, the worker threads' .mjs files, ../package.json, ../../../web/dist) holds in both.
// Every file of src/ that is not TypeScript (migrations, .mjs workers, .wat sources) is copied
// as it is. A module's imports stay as written, except one that leaves src/ (the web console's
// table of paths, web/src/routes.ts): that one is compiled into the module that imports it.
// Plain JavaScript itself, so the build needs only node and esbuild. `--out DIR` builds into DIR
// instead (the tests' build, test/global-setup.ts): DIR must sit at dist/'s depth, or have the
// repository's package.json, node_modules and web beside it.
import { build } from 'esbuild';
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';

const root = join(import.meta.dirname, '..');
const src = join(root, 'src');
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const out = values.out ? resolve(values.out) : join(root, 'dist');

/** Every file under dir, as paths. */
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/** Files only the tests read: their own code, fixtures and SQL snapshots. */
const testOnly = (file) =>
  /\.(test|fixtures)\.ts$/.test(file) || /\.d\.ts$/.test(file) || /[/\\]sql[/\\][^/\\]+\.sql$/.test(file);

const started = performance.now();
const files = walk(src).filter((f) => !testOnly(f));
const code = files.filter((f) => f.endsWith('.ts'));
const assets = files.filter((f) => !f.endsWith('.ts'));

/** Keeps every import external (file for file) but those reaching outside src/, inlined. */
const fileForFile = {
  name: 'file-for-file',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      if (!args.path.startsWith('.')) return { path: args.path, external: true };
      const target = resolve(args.resolveDir, args.path);
      if (target.startsWith(src + sep)) return { path: args.path, external: true };
      return { path: target.replace(/\.js$/, '.ts') };
    });
  },
};

rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: code,
  outdir: out,
  outbase: src,
  bundle: true,
  plugins: [fileForFile],
  format: 'esm',
  platform: 'node',
  target: 'node22',
  sourcemap: true,
  logLevel: 'warning',
});
for (const file of assets) {
  const to = join(out, relative(src, file));
  mkdirSync(dirname(to), { recursive: true });
  cpSync(file, to);
}
console.log(
  `built ${code.length} modules and ${assets.length} assets into ${out === join(root, 'dist') ? 'dist' : out}/ in ${Math.round(performance.now() - started)} ms`,
);
