// The `/observer` namespace's events in words and by example, from the timeline module's schemas
// (the AsyncAPI document and `/docs`); the compiler holds them to the event map.
import { z } from 'zod';
import type { NamespaceDoc, ServerEventDocs } from '../../platform/realtime/asyncapi.js';
import { instanceActivitySchema, timelineEventExample, timelineEventSchema } from '../timeline/index.js';
import {
  observerHandshakeFields,
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
      "Sent after commit for every timeline event this socket's observer's timeline holds: those whose observer (the instance's Level-8 observer, or the root observer) is it or an observer below it at any depth (the root: every event). Instance registrations, world-platform ingests, workflow events. Once per socket, in the timeline's order, however many of the socket's observers hold it. `metadata.instance` carries the instance's name, level, source and persona.",
    payload: timelineEventSchema,
    example: timelineEventExample,
  },
  instance_activity: {
    summary: "An instance's activity changed",
    description:
      'Sent when an instance of this observer, or of an observer below it, is switched on or off by an administrator, or is seen again after a quiet spell (its `lastSeenAt`).',
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
    "Watch an observer's timeline live, the observers below it included. Connect with `auth: { token, observerId }`, or `observerIds` (at most 20) for several observers on one connection; only a CSO, an administrator or the owner of each observer named is admitted (others: `connect_error` with `forbidden`; no observer named, or a bad id: `validation_failed`). Clients send nothing.",
  auth: observerHandshakeFields.extend({ token: z.string().describe('an access token') }),
  authExample: { token: 'eyJhbGciOiJIUzI1NiJ9.…', observerId: 3 },
  emits: observerEventDocs,
  receives: {},
};
