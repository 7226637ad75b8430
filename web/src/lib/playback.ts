// Timeline playback: a position in event time that advances at 1x, 2x, 5x or 10x of wall time
// while playing. The wall clock is injected (tests drive it by hand).

export const SPEEDS = [1, 2, 5, 10] as const;
export type Speed = (typeof SPEEDS)[number];

export class PlaybackClock {
  private base: number;
  private startedAt: number | null = null;
  speed: Speed = 1;

  constructor(
    readonly from: number,
    readonly to: number,
    private readonly now: () => number,
  ) {
    this.base = from;
  }

  get playing(): boolean {
    return this.startedAt !== null;
  }

  /** The current event-time position, never past the range's end. */
  position(): number {
    if (this.startedAt === null) return this.base;
    return Math.min(this.to, this.base + (this.now() - this.startedAt) * this.speed);
  }

  /** True once playback has reached the end of the range. */
  done(): boolean {
    return this.position() >= this.to;
  }

  play(): void {
    if (this.playing) return;
    if (this.done()) this.base = this.from;
    this.startedAt = this.now();
  }

  pause(): void {
    if (!this.playing) return;
    this.base = this.position();
    this.startedAt = null;
  }

  /** Changes speed without a jump: the position so far is kept. */
  setSpeed(speed: Speed): void {
    const playing = this.playing;
    this.pause();
    this.speed = speed;
    if (playing) this.startedAt = this.now();
  }

  seek(t: number): void {
    const playing = this.playing;
    this.base = Math.max(this.from, Math.min(this.to, t));
    this.startedAt = playing ? this.now() : null;
  }
}

/** How many of `times` (ascending) are at or before `t`. */
export function countUpTo(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
