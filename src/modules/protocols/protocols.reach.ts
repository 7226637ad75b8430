// A channel's protocol gives a turn its wording, never more reach than the caller has: what the
// turn may see and do (memory tiers, system figures, observers' events, tools) is at most what the
// caller's own protocol allows, unless the turn comes from the channel itself for an account linked
// on the chat platform. Pure.
import type { ResolvedProtocol } from './protocols.rules.js';
import type { Capabilities } from './protocols.schemas.js';

const MEMORY_ORDER: readonly Capabilities['memoryAccess'][] = ['limited', 'standard', 'full'];

/** The lesser of two capability sets: each capability at most what both give. */
export function lesserCapabilities(a: Capabilities, b: Capabilities): Capabilities {
  const memory = Math.min(MEMORY_ORDER.indexOf(a.memoryAccess), MEMORY_ORDER.indexOf(b.memoryAccess));
  return {
    memoryAccess: MEMORY_ORDER[memory]!,
    adminAccess: a.adminAccess && b.adminAccess,
    observer: a.observer && b.observer,
  };
}

/** The tools both allow-lists allow (`*`: every tool). */
export function commonTools(a: readonly string[], b: readonly string[]): string[] {
  if (a.includes('*')) return [...b];
  if (b.includes('*')) return [...a];
  return a.filter((t) => b.includes(t));
}

/** The channel's protocol with its reach cut to the caller's own protocol's: its template, tone,
 * rules and workflow stand; its capabilities and tools are at most the caller's. */
export function withinReach(channel: ResolvedProtocol, own: ResolvedProtocol): ResolvedProtocol {
  return {
    ...channel,
    capabilities: lesserCapabilities(channel.capabilities, own.capabilities),
    tools: commonTools(channel.tools, own.tools),
  };
}

/** Whether a channel's protocol reaches further than the caller's own. */
export function reachesFurther(channel: ResolvedProtocol, own: ResolvedProtocol): boolean {
  const cut = withinReach(channel, own);
  return (
    cut.tools.length !== channel.tools.length ||
    cut.capabilities.memoryAccess !== channel.capabilities.memoryAccess ||
    cut.capabilities.adminAccess !== channel.capabilities.adminAccess ||
    cut.capabilities.observer !== channel.capabilities.observer
  );
}
