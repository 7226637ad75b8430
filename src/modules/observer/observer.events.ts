// The `/observer` namespace's events in words and by example, from the timeline module's schemas
// (the AsyncAPI document and `/docs`); the compiler holds them to the event map.
import { z } from 'zod';
import type { NamespaceDoc, ServerEventDocs } from '../../platform/realtime/asyncapi.js';
import { instanceActivitySchema, timelineEventExample, timelineEventSchema } from '../timeline/index.js';
import {
  observerHandshake,
  reflectionExample,
  reflectionSchema,
  summaryExample,
  summarySchema,
} from './observer.schemas.js';
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
  summary_update: {
    summary: "This observer's summary after a cycle",
    description:
      "Sent after each `POST /api/observer/observer/<id>/cycle`, whatever its outcome, and after an onboarding or a diary-compliance check of one of its instances: the same object as `GET …/summary` (instances, events in all and in the window, diary compliance, the meta-state), over the cycle's window.",
    payload: summarySchema,
    example: summaryExample,
  },
  reflection_generated: {
    summary: 'This observer reflected on its timeline',
    description:
      'Sent after commit when a reflection is stored (by `POST …/reflection` or a cycle): its memory id, its text (at most 4,000 characters; offline, a deterministic digest), the events it covered.',
    payload: reflectionSchema,
    example: reflectionExample,
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
