// Persona sessions' pure rules: the personas, the persona type routing takes from each (contract:
// "Persona sessions"), and the title of a session's conversation.

export const PERSONAS = ['Observer', 'Sister', 'Worker'] as const;
export type Persona = (typeof PERSONAS)[number];

/** Routing's persona type of each persona (protocols' `routeProtocol` reads `coder` as TECH). */
const PERSONA_TYPES: Record<Persona, string> = {
  Observer: 'observer',
  Sister: 'sister',
  Worker: 'coder',
};

export function personaTypeOf(persona: Persona): string {
  return PERSONA_TYPES[persona];
}

export function isPersona(value: string): value is Persona {
  return (PERSONAS as readonly string[]).includes(value);
}

/** The title of a session's conversation (it appears in the caller's conversation list). */
export function sessionTitle(persona: Persona, observerName: string): string {
  return `${persona} · ${observerName}`.slice(0, 200);
}
