// Pure rules of the timeline: which observer an event belongs to, and when an instance's
// activity counts as changed (contract: "Instances, timeline and sync").

export interface InstanceRef {
  id: number;
  level: 5 | 8;
  parent_instance_id: number | null;
}

/** spec: every timeline event is linked to the observer. An observer (Level 8) is its own
 * observer; a Level-5 instance's observer is its Level-8 parent, else the root observer. */
export function observerOf(instance: InstanceRef | null, rootObserverId: number): number {
  if (!instance) return rootObserverId;
  if (instance.level === 8) return instance.id;
  return instance.parent_instance_id ?? rootObserverId;
}

/** `lastSeenAt` is written at most once per this interval, so a busy instance does not turn
 * every event into a write on one hot row. */
export const LAST_SEEN_RESOLUTION_MS = 1000;

/** An instance that has not been seen for this long is reported again (instance_activity) when
 * it shows activity: its activity changed from idle to active. */
export const IDLE_AFTER_MS = 5 * 60 * 1000;

export function activityUpdate(lastSeenAt: Date | null, now: Date): { touch: boolean; announce: boolean } {
  if (!lastSeenAt) return { touch: true, announce: true };
  const age = now.getTime() - lastSeenAt.getTime();
  return { touch: age >= LAST_SEEN_RESOLUTION_MS, announce: age >= IDLE_AFTER_MS };
}

/** An instance's `isActive` changed (`metadata.isActive`): its past activity is rebuilt from these. */
export const ACTIVITY_CHANGED_EVENT = 'instance_activity_changed';
/** An observer reflected (`metadata.memoryId`). */
export const REFLECTION_EVENT = 'reflection_generated';
/** Event types only the service writes; ingestion refuses them. */
export const SERVICE_EVENT_TYPES: readonly string[] = [ACTIVITY_CHANGED_EVENT, REFLECTION_EVENT];
