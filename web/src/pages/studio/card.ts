// The character card's pure rules (table-tested in card.test.ts): a character as the editing form
// holds it, the form back as the body PUT/POST take (with its mistakes named), the search over the
// list, and a character's tools in words. `tools` is optional on the answer: a server that does not
// keep tools answers without it, and the form then starts with none.
import type { Schemas } from '../../api/client';

export interface Tools {
  modifyInventory?: { items: number[] | 'all'; maxQuantity: number; dailyQuantity: number };
  modifyCurrency?: { maxAmount: number; dailyAmount: number };
}
export type Character = Schemas['Npc'] & { tools?: Tools | null };
export type PlayerMemory = Schemas['Npc']['playerMemory'];

export interface CardForm {
  name: string;
  description: string;
  personality: string;
  speakingStyle: string;
  /** One goal a line. */
  goals: string;
  playerMemory: PlayerMemory;
  inventory: { on: boolean; all: boolean; items: number[]; maxQuantity: string; dailyQuantity: string };
  currency: { on: boolean; maxAmount: string; dailyAmount: string };
}

export interface CardBody {
  name: string;
  description: string;
  personaType?: string;
  metadata?: Record<string, unknown>;
  personality: string;
  speakingStyle: string;
  goals: string[];
  playerMemory: PlayerMemory;
  /** Left out for a character with no tools (PUT replaces: leaving it out takes them away). */
  tools?: Tools;
}

export function formOf(c?: Character): CardForm {
  const inv = c?.tools?.modifyInventory;
  const cur = c?.tools?.modifyCurrency;
  return {
    name: c?.name ?? '',
    description: c?.description ?? '',
    personality: c?.personality ?? '',
    speakingStyle: c?.speakingStyle ?? '',
    goals: (c?.goals ?? []).join('\n'),
    playerMemory: c?.playerMemory ?? 'own',
    inventory: {
      on: Boolean(inv),
      all: inv ? inv.items === 'all' : false,
      items: inv && inv.items !== 'all' ? inv.items : [],
      maxQuantity: inv ? String(inv.maxQuantity) : '1',
      dailyQuantity: inv ? String(inv.dailyQuantity) : '5',
    },
    currency: {
      on: Boolean(cur),
      maxAmount: cur ? String(cur.maxAmount) : '10',
      dailyAmount: cur ? String(cur.dailyAmount) : '50',
    },
  };
}

/** A whole number ≥ 1 typed in a field, or the sentence saying what is wrong with it. */
function count(value: string, label: string): number | string {
  const n = Number(value.trim());
  return value.trim() !== '' && Number.isInteger(n) && n >= 1
    ? n
    : `${label} must be a whole number of 1 or more.`;
}

/** The body to send for the form, keeping what the card does not edit (persona type, metadata)
 * of the character it edits; or the form's mistakes, each a sentence. */
export function bodyOf(f: CardForm, editing?: Character): { body: CardBody } | { errors: string[] } {
  const errors: string[] = [];
  if (!f.name.trim()) errors.push('A character needs a name.');
  const tools: Tools = {};
  if (f.inventory.on) {
    const max = count(f.inventory.maxQuantity, 'Items at a time');
    const daily = count(f.inventory.dailyQuantity, 'Items a day');
    for (const v of [max, daily]) if (typeof v === 'string') errors.push(v);
    if (!f.inventory.all && f.inventory.items.length === 0)
      errors.push('Choose the items the character may give or take, or allow every item.');
    if (typeof max === 'number' && typeof daily === 'number') {
      if (daily < max) errors.push('Items a day cannot be fewer than items at a time.');
      tools.modifyInventory = {
        items: f.inventory.all ? 'all' : [...f.inventory.items].sort((a, b) => a - b),
        maxQuantity: max,
        dailyQuantity: daily,
      };
    }
  }
  if (f.currency.on) {
    const max = count(f.currency.maxAmount, 'Coins at a time');
    const daily = count(f.currency.dailyAmount, 'Coins a day');
    for (const v of [max, daily]) if (typeof v === 'string') errors.push(v);
    if (typeof max === 'number' && typeof daily === 'number') {
      if (daily < max) errors.push('Coins a day cannot be fewer than coins at a time.');
      tools.modifyCurrency = { maxAmount: max, dailyAmount: daily };
    }
  }
  if (errors.length) return { errors };
  return {
    body: {
      name: f.name.trim(),
      description: f.description,
      ...(editing?.personaType ? { personaType: editing.personaType } : {}),
      ...(editing ? { metadata: editing.metadata } : {}),
      personality: f.personality,
      speakingStyle: f.speakingStyle,
      goals: f.goals
        .split('\n')
        .map((g) => g.trim())
        .filter(Boolean),
      playerMemory: f.playerMemory,
      ...(tools.modifyInventory || tools.modifyCurrency ? { tools } : {}),
    },
  };
}

/** Whether a character matches a search: every word of it in its name, description or persona
 * type, in any case. */
export function matches(c: Character, query: string): boolean {
  const hay = `${c.name} ${c.description} ${c.personaType ?? ''}`.toLowerCase();
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => hay.includes(w));
}

/** A character's tools in words, for its row in the list. */
export function toolsSummary(tools: Tools | null | undefined, itemName: (id: number) => string): string {
  const parts: string[] = [];
  const inv = tools?.modifyInventory;
  if (inv)
    parts.push(
      `gives or takes ${inv.items === 'all' ? 'any item' : inv.items.map(itemName).join(', ')} (${inv.maxQuantity} at a time, ${inv.dailyQuantity} a day)`,
    );
  const cur = tools?.modifyCurrency;
  if (cur) parts.push(`gives or takes coins (${cur.maxAmount} at a time, ${cur.dailyAmount} a day)`);
  return parts.length ? parts.join('; ') : 'no tools';
}
