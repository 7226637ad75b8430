// The `/observer` socket of one observer: connects while the page shows it, reports whether it is
// live, and hands each server event to the page's current handlers (no reconnect when they change).
import { useEffect, useRef, useState } from 'react';
import type { Schemas } from '../../api/client';
import { observerSocket } from '../../lib/sockets';

export interface ObserverHandlers {
  timeline_update?: (e: Schemas['TimelineEvent']) => void;
  summary_update?: (s: Schemas['ObserverSummary']) => void;
  reflection_generated?: (r: Schemas['Reflection']) => void;
}

export function useObserverSocket(observerId: number | null, handlers: ObserverHandlers) {
  const [live, setLive] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const current = useRef(handlers);
  current.current = handlers;

  useEffect(() => {
    if (observerId === null) return;
    setError(null);
    const s = observerSocket(observerId);
    s.on('connect', () => {
      setLive(true);
      setError(null);
    });
    s.on('disconnect', () => setLive(false));
    s.on('connect_error', (e: Error & { data?: { detail?: string } }) =>
      setError(e.data?.detail ?? e.message),
    );
    s.on('timeline_update', (e) => current.current.timeline_update?.(e));
    s.on('summary_update', (x) => current.current.summary_update?.(x));
    s.on('reflection_generated', (r) => current.current.reflection_generated?.(r));
    s.connect();
    return () => {
      s.disconnect();
      setLive(false);
    };
  }, [observerId]);

  return { live, error };
}
