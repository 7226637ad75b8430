// Playback of the loaded time range: a clock (lib/playback.ts) runs from the first loaded event's
// time to the last at 1x, 2x, 5x or 10x, and the feed shows the events up to its position.
import { useEffect, useRef, useState } from 'react';
import { countUpTo, PlaybackClock, SPEEDS, type Speed } from '../../lib/playback';

/** `times`: the events' times, ascending. `shown` is how many of them are up to the position
 * (null: playback is off, all show). */
export function usePlayback(times: number[]) {
  const [speed, setSpeed] = useState<Speed>(1);
  const [playing, setPlaying] = useState(false);
  const [shown, setShown] = useState<number | null>(null);
  const clock = useRef<PlaybackClock | null>(null);

  // Reveal events up to the clock's position, one animation frame at a time.
  useEffect(() => {
    if (!playing) return;
    let frame = 0;
    const tick = () => {
      const c = clock.current;
      if (!c) return;
      setShown(countUpTo(times, c.position()));
      if (c.done()) {
        c.pause();
        setPlaying(false);
        return;
      }
      frame = requestAnimationFrame(tick);
    };
    frame = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(frame);
  }, [playing, times]);

  function ensureClock(): PlaybackClock | null {
    if (times.length === 0) return null;
    const from = times[0]!;
    const to = times[times.length - 1]!;
    if (!clock.current || clock.current.from !== from || clock.current.to !== to) {
      const at = clock.current?.position();
      clock.current = new PlaybackClock(from, to, () => performance.now());
      clock.current.setSpeed(speed);
      if (at !== undefined) clock.current.seek(at);
    }
    return clock.current;
  }

  return {
    speed,
    playing,
    shown,
    position: () => clock.current?.position() ?? times[times.length - 1] ?? 0,
    toggle: () => {
      const c = ensureClock();
      if (!c) return;
      if (c.playing) {
        c.pause();
        setPlaying(false);
      } else {
        c.play();
        setPlaying(true);
      }
    },
    chooseSpeed: (s: Speed) => {
      setSpeed(s);
      clock.current?.setSpeed(s);
    },
    seek: (t: number) => {
      const c = ensureClock();
      if (!c) return;
      c.seek(t);
      setShown(countUpTo(times, c.position()));
    },
    showAll: () => {
      clock.current?.pause();
      setPlaying(false);
      setShown(null);
    },
  };
}

export type Playback = ReturnType<typeof usePlayback>;

export function PlaybackControls({ p, times }: { p: Playback; times: number[] }) {
  const at = p.position();
  return (
    <div className="row wrap playback" role="group" aria-label="Playback">
      <button type="button" onClick={p.toggle} disabled={times.length === 0}>
        {p.playing ? 'Pause' : 'Play'}
      </button>
      {SPEEDS.map((s) => (
        <button
          key={s}
          type="button"
          className={s === p.speed ? 'selected' : 'secondary'}
          aria-pressed={s === p.speed}
          onClick={() => p.chooseSpeed(s)}
        >
          {s}x
        </button>
      ))}
      {p.shown !== null && (
        <button type="button" className="secondary" onClick={p.showAll}>
          Show all
        </button>
      )}
      {times.length > 1 && (
        <label className="position">
          Playback position
          <input
            type="range"
            min={times[0]}
            max={times[times.length - 1]}
            step={Math.max(1, Math.round((times[times.length - 1]! - times[0]!) / 1000))}
            value={at}
            aria-valuetext={new Date(at).toLocaleString()}
            onChange={(e) => p.seek(Number(e.target.value))}
          />
        </label>
      )}
    </div>
  );
}
