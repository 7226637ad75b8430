// The tools a character may use in a chat, and their limits: give or take items (which ones, how
// many at a time and a day) and energy coins (how many at a time and a day). Unticked: the
// character does not have the tool.
import type { Schemas } from '../../api/client';
import type { CardForm } from './card';

export function ToolsEditor({
  form,
  items,
  onChange,
}: {
  form: CardForm;
  items: Schemas['Item'][];
  onChange: (f: CardForm) => void;
}) {
  const inv = form.inventory;
  const cur = form.currency;
  const setInv = (change: Partial<CardForm['inventory']>) =>
    onChange({ ...form, inventory: { ...inv, ...change } });
  const setCur = (change: Partial<CardForm['currency']>) =>
    onChange({ ...form, currency: { ...cur, ...change } });
  return (
    <fieldset className="tools">
      <legend>Tools</legend>
      <label className="check">
        <input type="checkbox" checked={inv.on} onChange={(e) => setInv({ on: e.target.checked })} />
        May give items to a player or take them
      </label>
      {inv.on && (
        <div className="tool-limits">
          <div className="row wrap">
            <label>
              Items at a time
              <input
                type="number"
                min={1}
                inputMode="numeric"
                className="short"
                value={inv.maxQuantity}
                onChange={(e) => setInv({ maxQuantity: e.target.value })}
              />
            </label>
            <label>
              Items a day
              <input
                type="number"
                min={1}
                inputMode="numeric"
                className="short"
                value={inv.dailyQuantity}
                onChange={(e) => setInv({ dailyQuantity: e.target.value })}
              />
            </label>
          </div>
          <label className="check">
            <input type="checkbox" checked={inv.all} onChange={(e) => setInv({ all: e.target.checked })} />
            Any item
          </label>
          {!inv.all && (
            <fieldset className="item-picks">
              <legend>Which items</legend>
              {items.length === 0 && <p className="muted small">The catalogue has no items yet.</p>}
              {items.map((i) => (
                <label key={i.id} className="check">
                  <input
                    type="checkbox"
                    checked={inv.items.includes(i.id)}
                    onChange={(e) =>
                      setInv({
                        items: e.target.checked ? [...inv.items, i.id] : inv.items.filter((x) => x !== i.id),
                      })
                    }
                  />
                  {i.name}
                </label>
              ))}
            </fieldset>
          )}
        </div>
      )}
      <label className="check">
        <input type="checkbox" checked={cur.on} onChange={(e) => setCur({ on: e.target.checked })} />
        May give energy coins to a player or take them
      </label>
      {cur.on && (
        <div className="row wrap tool-limits">
          <label>
            Coins at a time
            <input
              type="number"
              min={1}
              inputMode="numeric"
              className="short"
              value={cur.maxAmount}
              onChange={(e) => setCur({ maxAmount: e.target.value })}
            />
          </label>
          <label>
            Coins a day
            <input
              type="number"
              min={1}
              inputMode="numeric"
              className="short"
              value={cur.dailyAmount}
              onChange={(e) => setCur({ dailyAmount: e.target.value })}
            />
          </label>
        </div>
      )}
    </fieldset>
  );
}
