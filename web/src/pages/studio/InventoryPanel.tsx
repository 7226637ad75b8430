// A player's items and energy coins; an admin gives or takes some (POST /api/inventory/modify).
import { useState, type FormEvent } from 'react';
import { api, describe } from '../../api/client';
import { useRead } from '../../lib/useRead';
import { Alert } from '../../ui';
import { useItems } from './useStudio';

export function InventoryPanel({ playerId, onStatus }: { playerId: number; onStatus: (s: string) => void }) {
  const inventory = useRead(`studio:inventory:${playerId}`, () =>
    api.GET('/api/inventory', { params: { query: { userId: playerId } } }),
  );
  const items = useItems();
  const [itemId, setItemId] = useState('');
  const [quantity, setQuantity] = useState('1');
  const [coins, setCoins] = useState('10');
  const [error, setError] = useState<string | null>(null);

  async function change(
    body: { userId: number; itemId: number; quantity: number } | { userId: number; amount: number },
  ) {
    const { data, error: err } = await api.POST('/api/inventory/modify', {
      body,
      params: { header: { 'idempotency-key': crypto.randomUUID() } },
    });
    if (err || !data) return setError(describe(err));
    setError(null);
    inventory.set(data);
    onStatus('Inventory changed.');
  }

  const giveItem = (e: FormEvent) => {
    e.preventDefault();
    const q = Number(quantity);
    if (!itemId || !Number.isInteger(q) || q === 0)
      return setError('Choose an item and a whole, non-zero quantity.');
    void change({ userId: playerId, itemId: Number(itemId), quantity: q });
  };
  const giveCoins = (e: FormEvent) => {
    e.preventDefault();
    const a = Number(coins);
    if (!Number.isInteger(a) || a === 0) return setError('Coins must be a whole, non-zero amount.');
    void change({ userId: playerId, amount: a });
  };

  const inv = inventory.data;
  return (
    <section className="panel" aria-labelledby="inventory-title">
      <h3 id="inventory-title">Inventory</h3>
      <Alert message={error ?? inventory.error} />
      {inv && (
        <>
          <p>
            Energy coins: <strong>{inv.energy_coins}</strong>
          </p>
          <ul className="list" aria-label="Items held">
            {inv.items.length === 0 && <li className="muted small">No items.</li>}
            {inv.items.map((i) => (
              <li key={i.item_id} className="small">
                {i.name} × {i.quantity} <span className="muted">({i.type})</span>
              </li>
            ))}
          </ul>
        </>
      )}
      <form className="row wrap" aria-label="Give or take items" onSubmit={giveItem}>
        <label>
          Item
          <select value={itemId} onChange={(e) => setItemId(e.target.value)}>
            <option value="">Choose</option>
            {(items.data ?? []).map((i) => (
              <option key={i.id} value={i.id}>
                {i.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Quantity (− takes)
          <input
            type="number"
            className="short"
            value={quantity}
            onChange={(e) => setQuantity(e.target.value)}
          />
        </label>
        <button type="submit" className="secondary">
          Change items
        </button>
      </form>
      <form className="row wrap" aria-label="Give or take coins" onSubmit={giveCoins}>
        <label>
          Coins (− takes)
          <input type="number" className="short" value={coins} onChange={(e) => setCoins(e.target.value)} />
        </label>
        <button type="submit" className="secondary">
          Change coins
        </button>
      </form>
    </section>
  );
}
