// Makes the offline embedder's compact word-vector copy once, at install (`postinstall`), so the
// first memory a fresh service stores does not wait the few seconds it takes. Never fails the
// install: the service makes the copy itself on first use when this could not.
import { ensureCache } from '../src/platform/models/word-vectors.js';

try {
  const started = performance.now();
  const path = ensureCache();
  console.log(`word vectors ready at ${path} (${Math.round(performance.now() - started)} ms)`);
} catch (err) {
  console.warn(`word vectors not prepared now (the service prepares them on first use): ${String(err)}`);
}
