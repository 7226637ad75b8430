// What the `/observer` namespace sends, as types only: shared by the socket handlers, the event
// documentation and the clients (the web console type-checks it without the service's code).
import type { InstanceActivity, TimelineEvent } from '../timeline/index.js';
import type { ObserverSummary, Reflection } from './observer.schemas.js';

/** What the server sends on `/observer` (clients send nothing but the handshake). */
export interface ObserverServerEvents {
  timeline_update: (event: TimelineEvent) => void;
  instance_activity: (activity: InstanceActivity) => void;
  /** The observer's summary after its cycle (the `GET …/summary` object). */
  summary_update: (summary: ObserverSummary) => void;
  /** A new reflection of the observer. */
  reflection_generated: (reflection: Reflection) => void;
}
