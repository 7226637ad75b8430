import { describe, expect, it, vi } from 'vitest';
import { TokenStore, type TokenResponse } from './tokens';

function memoryStorage() {
  const m = new Map<string, string>();
  return {
    getItem: (k: string) => m.get(k) ?? null,
    setItem: (k: string, v: string) => void m.set(k, v),
    removeItem: (k: string) => void m.delete(k),
  };
}

const user = { id: 1, email: 'a@example.com', name: 'A', role: 'carbon', accountType: 'public' };
const pair = (n: number, expiresIn = 3600): TokenResponse => ({
  accessToken: `access-${n}`,
  refreshToken: `refresh-${n}`,
  expiresIn,
  user,
});

describe('TokenStore', () => {
  it('keeps the access token in memory and only the refresh token in storage', async () => {
    const storage = memoryStorage();
    const store = new TokenStore({ refresh: vi.fn(), storage, now: () => 0 });
    store.accept(pair(1));
    expect(await store.accessToken()).toBe('access-1');
    expect(storage.getItem('assistant.refreshToken')).toBe('refresh-1');
    expect(JSON.stringify([...Object.values(storage)])).not.toContain('access-1');
  });

  it('refreshes before expiry, once for concurrent callers, and keeps the rotated token', async () => {
    let now = 0;
    const refresh = vi.fn(async (rt: string) => {
      await new Promise((r) => setTimeout(r, 5));
      return rt === 'refresh-1' ? pair(2) : null;
    });
    const storage = memoryStorage();
    const store = new TokenStore({ refresh, storage, now: () => now });
    store.accept(pair(1, 60));
    now = 50_000; // within a quarter of its 60 s lifetime of expiry
    const [a, b, c] = await Promise.all([store.accessToken(), store.accessToken(), store.refresh()]);
    expect([a, b, c]).toEqual(['access-2', 'access-2', 'access-2']);
    expect(refresh).toHaveBeenCalledTimes(1);
    expect(storage.getItem('assistant.refreshToken')).toBe('refresh-2');
  });

  it('refreshes a short-lived token a quarter of its lifetime early', async () => {
    let now = 0;
    const refresh = vi.fn(async () => pair(2, 8));
    const store = new TokenStore({ refresh, storage: memoryStorage(), now: () => now });
    store.accept(pair(1, 8));
    now = 5_000;
    expect(await store.accessToken()).toBe('access-1');
    now = 6_500;
    expect(await store.accessToken()).toBe('access-2');
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it('restores a session from the stored refresh token after a reload', async () => {
    const storage = memoryStorage();
    storage.setItem('assistant.refreshToken', 'refresh-1');
    const store = new TokenStore({ refresh: async () => pair(2), storage, now: () => 0 });
    expect(store.hasSession()).toBe(true);
    expect(await store.accessToken()).toBe('access-2');
    expect(store.user?.email).toBe('a@example.com');
  });

  it('signs out when the server refuses the refresh token', async () => {
    const storage = memoryStorage();
    const seen: unknown[] = [];
    let now = 0;
    const store = new TokenStore({ refresh: async () => null, storage, now: () => now });
    store.accept(pair(1, 1));
    now = 2_000;
    store.onChange((u) => seen.push(u));
    expect(await store.accessToken()).toBeNull();
    expect(store.hasSession()).toBe(false);
    expect(seen).toEqual([null]);
  });

  it('keeps the refresh token through a network failure', async () => {
    const storage = memoryStorage();
    storage.setItem('assistant.refreshToken', 'refresh-1');
    const store = new TokenStore({
      refresh: async () => {
        throw new Error('offline');
      },
      storage,
      now: () => 0,
    });
    expect(await store.accessToken()).toBeNull();
    expect(storage.getItem('assistant.refreshToken')).toBe('refresh-1');
  });
});
