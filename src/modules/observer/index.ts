// The `/observer` namespace: observers watch their timeline live (the registry of instances and
// observers, and the timeline itself, are the timeline module's).
export {
  OBSERVER_NAMESPACE,
  observerRoom,
  observerSockets,
  type ObserverServerEvents,
  type ObserverSocketOptions,
} from './observer.socket.js';
export { observerNamespaceDoc } from './observer.events.js';
