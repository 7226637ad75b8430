/** A deterministic pseudo-random sequence in [0, 1) (a linear congruential generator): the benches'
 * data and pools are the same on every run, database and code. */
export function prng(seed: number) {
  return () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
}
