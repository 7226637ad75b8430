// The `/observer` namespace's events in words and by example, from the timeline module's schemas
// (the AsyncAPI document and `/docs`); the compiler holds them to the event map.
import { z } from 'zod';
import type { NamespaceDoc, ServerEventDocs } from '../../platform/realtime/asyncapi.js';
import { instanceActivitySchema, timelineEventExample, timelineEventSchema } from '../timeline/index.js';
import {
  observerHandshake,
  reflectionSchema,
  summarySchema,
  type ObserverSummary,
  type Reflection,
} from './observer.schemas.js';
import type { ObserverServerEvents } from './observer.socket.js';

const REFLECTION_EXAMPLE: Reflection = {
  memoryId: 812,
  observerId: 3,
  text: 'Over the last day the harbour instances were quiet until the evening ingest; two workflows advanced.',
  eventCount: 42,
  fromTimelineAt: '2026-11-24T09:00:00.000Z',
  toTimelineAt: '2026-11-25T08:59:00.000Z',
  offline: false,
  createdAt: '2026-11-25T09:00:01.000Z',
};

const META_EXAMPLE: ObserverSummary['metaState'] = {
  cycles: 4,
  lastCycleAt: '2026-11-25T09:00:01.000Z',
  lastCycleOutcome: 'completed',
  lastReflectionId: 812,
  lastReflectionAt: '2026-11-25T09:00:01.000Z',
  awareness: { instances: 6, activeInstances: 5, eventsInWindow: 42 },
};

const SUMMARY_EXAMPLE: ObserverSummary = {
  observerId: 3,
  generatedAt: '2026-11-25T09:00:02.000Z',
  windowHours: 24,
  instances: {
    total: 6,
    active: 5,
    inactive: 1,
    byLevel: { '5': 5, '8': 1 },
    bySource: { world_platform: 5, none: 1 },
    byPersona: { none: 6 },
  },
  events: {
    total: 310,
    inWindow: 42,
    bySource: { state_machine: 20, world_platform: 22 },
    byType: { workflow_transition: 8, diary_entry: 5 },
    byLevel: { '5': 30, '8': 12 },
    byPersona: { none: 42 },
  },
  diaryCompliance: { compliant: false, missingCount: 1, windowHours: 24 },
  metaState: META_EXAMPLE,
};

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
    summary: "The observer's summary after a change",
    description:
      'Sent after a cycle (`POST …/cycle`), an onboarding or a diary-compliance check of this observer: the same object `GET /api/observer/observer/<id>/summary` answers (instance and event statistics, diary compliance, the meta-state).',
    payload: summarySchema,
    example: SUMMARY_EXAMPLE,
  },
  reflection_generated: {
    summary: "A reflection over the observer's recent events was stored",
    description:
      "Sent after `POST …/reflection` or a cycle stored a reflection: one model call over the window's events (offline: a deterministic digest, `offline: true`), kept as an `observer_reflection` memory.",
    payload: reflectionSchema,
    example: REFLECTION_EXAMPLE,
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
