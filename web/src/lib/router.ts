// A small history router: the path is state; links push it without a reload.
import { useEffect, useState } from 'react';

const listeners = new Set<() => void>();

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const l of listeners) l();
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

/** The query parameter `name` of the address (a page's selection, kept in the address so it is
 * deep-linkable and survives a reload), and a setter that replaces it in the address. */
export function useQueryParam(name: string): [string | null, (value: string | null) => void] {
  const [value, setValue] = useState(() => new URLSearchParams(location.search).get(name));
  useEffect(() => {
    const update = () => setValue(new URLSearchParams(location.search).get(name));
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, [name]);
  const set = (next: string | null) => {
    const q = new URLSearchParams(location.search);
    if (next === null) q.delete(name);
    else q.set(name, next);
    const search = q.toString();
    navigate(`${location.pathname}${search ? `?${search}` : ''}`, true);
  };
  return [value, set];
}
