// The `/observer` namespace's events in words and by example, from the timeline module's schemas
// (the AsyncAPI document and `/docs`); the compiler holds them to the event map.
import { z } from 'zod';
import type { NamespaceDoc, ServerEventDocs } from '../../platform/realtime/asyncapi.js';
import { instanceActivitySchema, timelineEventExample, timelineEventSchema } from '../timeline/index.js';
import { observerHandshake } from './observer.schemas.js';
import type { ObserverServerEvents } from './observer.socket.js';

export const observerEventDocs = {
  timeline_update: {
    summary: 'A timeline event of this observer was recorded',
    description:
      "Sent after commit for every timeline event whose observer is this socket's (the instance's Level-8 observer, or the root observer): instance registrations, world-platform ingests, workflow events. `metadata.instance` carries the instance's name, level, source and persona.",
    payload: timelineEventSchema,
    example: timelineEventExample,
  },
  instance_activity: {
    summary: "An instance's activity changed",
    description:
      'Sent when an instance of this observer is switched on or off by an administrator, or is seen again after a quiet spell (its `lastSeenAt`).',
    payload: instanceActivitySchema,
    example: { instanceId: 5, isActive: true, lastSeenAt: timelineEventExample.timelineAt },
  },
} satisfies ServerEventDocs<ObserverServerEvents>;

export const observerNamespaceDoc: NamespaceDoc = {
  namespace: '/observer',
  key: 'observer',
  title: 'Observer',
  description:
    "Watch one observer's timeline live. Connect with `auth: { token, observerId }`; only a CSO, an administrator or the observer's owner is admitted (others: `connect_error` with `forbidden`; a missing observerId: `validation_failed`). Clients send nothing.",
  auth: observerHandshake.extend({ token: z.string().describe('an access token') }),
  authExample: { token: 'eyJhbGciOiJIUzI1NiJ9.…', observerId: 3 },
  emits: observerEventDocs,
  receives: {},
};
