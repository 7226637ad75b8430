// Workflow shapes (contract "Workflows"): HTTP validation, OpenAPI and the service's views.
import { z } from 'zod';
import { pageFields, pageMeta } from '../../platform/http/pagination.js';
import { jsonObject, timelineEventSchema } from '../timeline/index.js';
import { ACTIONS, GUARDS, WORKFLOW_DEFINITIONS } from './workflows.definitions.js';
import {
  ARTIFACT_STATUSES,
  REVIEW_STATUSES,
  RUN_STATUSES,
  RUN_TRIGGERS,
  SPECIALTIES,
  TASK_STATUSES,
} from './workflows.tables.js';

export { SPECIALTIES, TASK_STATUSES };

const guardSchema = z.enum(GUARDS);

export const CONTEXT_MAX_BYTES = 64 * 1024;
const utf8Bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

export const definitionSchema = z
  .object({
    machineId: z.string(),
    version: z.number().int(),
    protocolId: z.string(),
    initial: z.string(),
    states: z.array(
      z.object({
        name: z.string(),
        terminal: z.boolean(),
        checklist: z.array(z.string()),
        actions: z.array(z.enum(ACTIONS)),
      }),
    ),
    transitions: z.array(z.object({ from: z.string(), to: z.string(), guard: guardSchema.nullable() })),
  })
  .meta({
    id: 'WorkflowDefinition',
    // The real first definition, so the example cannot drift from what is served.
    examples: [WORKFLOW_DEFINITIONS[0]!],
  });
export const definitionListResponse = z.object({ definitions: z.array(definitionSchema) });
export const machineIdParam = z.object({
  machineId: z
    .string()
    .min(1)
    .max(100)
    .meta({ examples: ['documentation_flow_v1'] }),
});

const idText = z.string().trim().min(1).max(100);
const expectedVersion = z
  .number()
  .int()
  .min(1)
  .optional()
  .describe('the instance version this write is based on; another one → 409 conflict');

export const contextSchema = z
  .looseObject({
    title: z.string().max(200).optional(),
    goal: z.string().max(4000).optional(),
    tasks: z
      .array(
        z.strictObject({
          title: z.string().trim().min(1).max(200),
          description: z.string().max(4000).optional(),
          specialty: z.enum(SPECIALTIES).optional(),
        }),
      )
      .max(20)
      .optional(),
  })
  .refine((c) => utf8Bytes(c) <= CONTEXT_MAX_BYTES, { message: 'context is at most 64 KiB of JSON' });

export const createInstanceBody = z
  .strictObject({
    machineId: z.string().min(1).max(100),
    protocolId: z.string().min(1).max(100).optional(),
    context: contextSchema.optional(),
    channelId: idText.optional(),
    guildId: idText.optional(),
    registryInstanceId: z.number().int().positive().optional().describe('admins only: a registry instance'),
  })
  .meta({
    id: 'WorkflowInstanceCreate',
    examples: [
      {
        machineId: 'documentation_flow_v1',
        context: { title: 'Harbour guide', goal: 'A guide for new players' },
        channelId: '1203948576012345678',
      },
    ],
  });
export type CreateInstanceInput = z.infer<typeof createInstanceBody>;

export const allowedTransitionSchema = z.object({
  to: z.string(),
  guard: guardSchema.nullable(),
  satisfied: z.boolean(),
  missing: z.array(z.string()),
});

export const instanceSchema = z
  .object({
    id: z.uuid(),
    machineId: z.string(),
    protocolId: z.string(),
    state: z.string(),
    context: jsonObject,
    channelId: z.string().nullable(),
    guildId: z.string().nullable(),
    createdByUserId: z.number().int().nullable(),
    updatedByUserId: z.number().int().nullable(),
    version: z.number().int(),
    stateVisit: z.number().int(),
    stateEnteredAt: z.iso.datetime(),
    checklist: z.array(z.string()),
    allowedTransitions: z.array(allowedTransitionSchema),
    registryInstanceId: z.number().int().nullable(),
    activeRunId: z.uuid().nullable(),
    archivedAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({
    id: 'WorkflowInstance',
    examples: [
      {
        id: '5f0c6d1e-8a9b-4c3d-9e2f-1a2b3c4d5e6f',
        machineId: 'documentation_flow_v1',
        protocolId: 'observer_onboarding_v1',
        state: 'intake',
        context: { title: 'Harbour guide' },
        channelId: '1203948576012345678',
        guildId: null,
        createdByUserId: 42,
        updatedByUserId: 42,
        version: 1,
        stateVisit: 1,
        stateEnteredAt: '2025-05-01T09:30:00.000Z',
        checklist: ['Capture the goal', 'Break the work into tasks'],
        allowedTransitions: [{ to: 'triage', guard: null, satisfied: true, missing: [] }],
        registryInstanceId: null,
        activeRunId: null,
        archivedAt: null,
        createdAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
export type WorkflowInstance = z.infer<typeof instanceSchema>;

const booleanQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

export const listInstancesQuery = z.object({
  machineId: z.string().min(1).max(100).optional(),
  state: z.string().min(1).max(100).optional(),
  channelId: idText.optional(),
  archived: booleanQuery.optional(),
  ...pageFields(),
});
export type ListInstancesQuery = z.infer<typeof listInstancesQuery>;
export const instanceListResponse = z.object({ instances: z.array(instanceSchema), ...pageMeta });

export const idParam = z.object({
  id: z.uuid().meta({ examples: ['5f0c6d1e-8a9b-4c3d-9e2f-1a2b3c4d5e6f'] }),
});
export const taskIdParam = z.object({
  taskId: z.uuid().meta({ examples: ['0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e'] }),
});

export const transitionBody = z
  .strictObject({ targetState: z.string().min(1).max(100), expectedVersion })
  .meta({ examples: [{ targetState: 'triage', expectedVersion: 3 }] });

export const approvalSchema = z
  .object({
    id: z.uuid(),
    instanceId: z.uuid(),
    state: z.string(),
    stateVisit: z.number().int(),
    approvedByUserId: z.number().int().nullable(),
    approvedByName: z.string(),
    note: z.string().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({
    id: 'WorkflowApproval',
    examples: [
      {
        id: '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
        instanceId: '5f0c6d1e-8a9b-4c3d-9e2f-1a2b3c4d5e6f',
        state: 'intake',
        stateVisit: 1,
        approvedByUserId: 1,
        approvedByName: 'Grace',
        note: 'Looks right.',
        createdAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
export type Approval = z.infer<typeof approvalSchema>;

export const advancedSchema = z
  .object({ from: z.string(), to: z.string(), guard: guardSchema })
  .nullable()
  .describe('the guarded exit this write took automatically, or null');
export type Advanced = z.infer<typeof advancedSchema>;

export const approvalBody = z
  .strictObject({ note: z.string().max(2000).optional(), expectedVersion })
  .meta({ examples: [{ note: 'Checked the outline with the team.', expectedVersion: 4 }] });
export const approvalResponse = z.object({
  approval: approvalSchema,
  instance: instanceSchema,
  advanced: advancedSchema,
});
export const approvalListResponse = z.object({ approvals: z.array(approvalSchema) });

/** http(s) only, at most 2048 characters; stored as given and never fetched. */
export const proofUrlSchema = z
  .string()
  .max(2048)
  .refine(
    (v) => {
      if (!URL.canParse(v)) return false;
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    },
    { message: 'must be an http(s) URL' },
  );

export const evidenceBody = z
  .strictObject({
    description: z.string().trim().min(1).max(2000),
    proofUrl: proofUrlSchema,
    expectedVersion,
  })
  .meta({
    examples: [
      {
        description: 'The published guide',
        proofUrl: 'https://docs.example.com/guides/harbour',
        expectedVersion: 5,
      },
    ],
  });
export const evidenceResponse = z.object({
  evidence: timelineEventSchema,
  instance: instanceSchema,
  advanced: advancedSchema,
});

export const timelineQuery = z.object({ limit: pageFields().limit });
export const timelineResponse = z.object({ events: z.array(timelineEventSchema) });

export const taskSchema = z
  .object({
    id: z.uuid(),
    instanceId: z.uuid(),
    title: z.string(),
    description: z.string(),
    status: z.enum(TASK_STATUSES),
    specialty: z.enum(SPECIALTIES),
    assignedPersonaId: z.number().int().nullable(),
    assignedHuman: z.string().nullable(),
    notes: z.string(),
    metadata: jsonObject,
    runCount: z.number().int(),
    createdAt: z.iso.datetime(),
  })
  .meta({
    id: 'WorkflowTask',
    examples: [
      {
        id: '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e',
        instanceId: '5f0c6d1e-8a9b-4c3d-9e2f-1a2b3c4d5e6f',
        title: 'Outline the guide',
        description: 'Sections and their order',
        status: 'in_progress',
        specialty: 'docs',
        assignedPersonaId: 7,
        assignedHuman: null,
        notes: '',
        metadata: {},
        runCount: 1,
        createdAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
export type Task = z.infer<typeof taskSchema>;
export const tasksQuery = z.object({ status: z.enum(TASK_STATUSES).optional() });
export const taskListResponse = z.object({ tasks: z.array(taskSchema) });

export const putTaskBody = z
  .strictObject({
    status: z.enum(TASK_STATUSES).optional(),
    assignedPersonaId: z.number().int().positive().nullable().optional().describe('a character, or null'),
    assignedHuman: z.string().trim().max(200).nullable().optional(),
    notes: z.string().max(10_000).optional(),
    title: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(10_000).optional(),
    metadata: jsonObject
      .refine((m) => utf8Bytes(m) <= CONTEXT_MAX_BYTES, { message: 'metadata is at most 64 KiB of JSON' })
      .optional(),
  })
  .meta({
    id: 'WorkflowTaskUpdate',
    examples: [{ status: 'in_progress', assignedPersonaId: 7, notes: 'Mira drafts the outline first.' }],
  });
export type PutTaskInput = z.infer<typeof putTaskBody>;

export const artifactSchema = z
  .object({
    id: z.uuid(),
    instanceId: z.uuid(),
    taskId: z.uuid().nullable(),
    personaId: z.number().int().nullable(),
    summary: z.string(),
    content: z.string().optional().describe('only when one artifact is read'),
    status: z.enum(ARTIFACT_STATUSES),
    reviewStatus: z.enum(REVIEW_STATUSES),
    reviewedByUserId: z.number().int().nullable(),
    reviewNotes: z.string().nullable(),
    metadata: jsonObject,
    createdAt: z.iso.datetime(),
    reviewedAt: z.iso.datetime().nullable(),
    issue: z
      .object({ number: z.number().int(), url: z.string() })
      .nullable()
      .describe(
        'beyond the spec: the newest issue filed in the configured tracker (GitHub) listing this artifact, once created; null without one',
      ),
  })
  .meta({
    id: 'WorkflowArtifact',
    examples: [
      {
        id: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
        instanceId: '5f0c6d1e-8a9b-4c3d-9e2f-1a2b3c4d5e6f',
        taskId: '0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e',
        personaId: 7,
        summary: 'Outline of the harbour guide',
        status: 'ready',
        reviewStatus: 'pending',
        reviewedByUserId: null,
        reviewNotes: null,
        metadata: {},
        createdAt: '2025-05-01T09:30:00.000Z',
        reviewedAt: null,
        issue: { number: 42, url: 'https://github.com/acme/harbour/issues/42' },
      },
    ],
  });
export type Artifact = z.infer<typeof artifactSchema>;
export const artifactIdParam = z.object({
  id: z.uuid().meta({ examples: ['c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f'] }),
});
export const artifactsQuery = z.object({
  taskId: z.uuid().optional(),
  reviewStatus: z.enum(REVIEW_STATUSES).optional(),
});
export const artifactListResponse = z.object({ artifacts: z.array(artifactSchema) });
export const reviewBody = z
  .strictObject({ approve: z.boolean(), notes: z.string().max(2000).optional() })
  .meta({ examples: [{ approve: true, notes: 'Clear and complete.' }] });
export const reviewResponse = z.object({
  artifact: artifactSchema,
  instance: instanceSchema,
  advanced: advancedSchema,
});

export const runSchema = z
  .object({
    id: z.uuid(),
    instanceId: z.uuid(),
    status: z.enum(RUN_STATUSES),
    trigger: z.enum(RUN_TRIGGERS),
    taskIds: z.array(z.uuid()),
    progress: z.object({ total: z.number().int(), completed: z.number().int(), failed: z.number().int() }),
    error: jsonObject.nullable(),
    createdAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .meta({
    id: 'WorkflowRun',
    examples: [
      {
        id: '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
        instanceId: '5f0c6d1e-8a9b-4c3d-9e2f-1a2b3c4d5e6f',
        status: 'running',
        trigger: 'manual',
        taskIds: ['0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e'],
        progress: { total: 1, completed: 0, failed: 0 },
        error: null,
        createdAt: '2025-05-01T09:30:00.000Z',
        finishedAt: null,
      },
    ],
  });
export type Run = z.infer<typeof runSchema>;
