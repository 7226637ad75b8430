// Typed in-process events, published after the transaction that caused them committed
// (a unit of work's `afterCommit`: `transaction(db, (uow) => …)`, unit-of-work.ts). The realtime layer listens and broadcasts;
// Socket.IO's adapter carries broadcasts to the other nodes, so this bus never needs to.
//
// Modules declare their events by augmenting AppEvents in their own files:
//   declare module '../../platform/events/bus.js' {
//     interface AppEvents { 'timeline.recorded': TimelineEvent }
//   }
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AppEvents {}

type Listener<T> = (payload: T) => void | Promise<void>;

export class EventBus {
  private readonly emitter = new EventEmitter({ captureRejections: false });
  constructor(private readonly log: Logger) {
    this.emitter.setMaxListeners(100);
  }

  on<K extends Extract<keyof AppEvents, string>>(name: K, listener: Listener<AppEvents[K]>): () => void {
    const wrapped = (payload: AppEvents[K]) => {
      try {
        const r = listener(payload);
        if (r instanceof Promise)
          r.catch((err: unknown) => this.log.error({ err, event: name }, 'event listener failed'));
      } catch (err) {
        this.log.error({ err, event: name }, 'event listener failed');
      }
    };
    this.emitter.on(name, wrapped);
    return () => this.emitter.off(name, wrapped);
  }

  publish<K extends Extract<keyof AppEvents, string>>(name: K, payload: AppEvents[K]): void {
    this.emitter.emit(name, payload);
  }
}
