// Which event ids a receiver has seen: one bit per id from a base (ids ascend), so 50 observers
// times a ten-minute stream of events cost kilobytes, not millions of set entries.
export class IdSet {
  private bits = new Uint8Array(1 << 16);
  size = 0;
  duplicates = 0;
  constructor(private readonly base: number) {}

  /** Adds `id`; false when it was there already (or is older than the base). */
  add(id: number): boolean {
    const i = id - this.base;
    if (i < 0) return false;
    if (i >> 3 >= this.bits.length) {
      const grown = new Uint8Array(Math.max(this.bits.length * 2, (i >> 3) + 1));
      grown.set(this.bits);
      this.bits = grown;
    }
    const mask = 1 << (i & 7);
    if (this.bits[i >> 3]! & mask) {
      this.duplicates++;
      return false;
    }
    this.bits[i >> 3]! |= mask;
    this.size++;
    return true;
  }

  has(id: number): boolean {
    const i = id - this.base;
    return i >= 0 && i >> 3 < this.bits.length && (this.bits[i >> 3]! & (1 << (i & 7))) !== 0;
  }

  /** How many of `ids` are missing. */
  missing(ids: number[]): number {
    let n = 0;
    for (const id of ids) if (!this.has(id)) n++;
    return n;
  }
}
