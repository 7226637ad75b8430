// The studio's shared reads: the characters (every page picks one), the item catalogue (the tools
// editor, the inventories), the players (whom to try a character as), and the chosen character,
// kept in the address (`?character=<id>`) so a page is deep-linkable and survives a reload.
import { api } from '../../api/client';
import { useQueryParam } from '../../lib/router';
import { useRead } from '../../lib/useRead';
import type { Character } from './card';

export function useCharacters() {
  return useRead<Character[]>('studio:characters', async () => {
    const { data, error } = await api.GET('/api/admin/data/npcs', { params: { query: { limit: 200 } } });
    return { data: data?.npcs ?? [], error };
  });
}

export function useItems() {
  return useRead('studio:items', async () => {
    const { data, error } = await api.GET('/api/items', { params: { query: { limit: 200 } } });
    return { data: data?.items ?? [], error };
  });
}

export function usePlayers() {
  return useRead('studio:players', async () => {
    const { data, error } = await api.GET('/api/admin/users', { params: { query: { limit: 200 } } });
    return { data: (data?.users ?? []).filter((u) => u.accountType !== 'npc'), error };
  });
}

/** The chosen character's id from the address, and a setter that writes it there. */
export function useChosen(): [number | null, (id: number | null) => void] {
  const [raw, set] = useQueryParam('character');
  const id = raw !== null && /^\d+$/.test(raw) ? Number(raw) : null;
  return [id, (next) => set(next === null ? null : String(next))];
}
