// Suggestion shapes (spec "Suggestion", contract "Suggestions"): HTTP validation, OpenAPI and the
// service's views.
import { z } from 'zod';
import { jsonObject } from '../timeline/index.js';
import {
  ACTION_TYPES,
  EXPIRED_REASONS,
  SAFETIES,
  STATUSES,
  SUGGESTION_TYPES,
  parseContextId,
} from './suggestions.rules.js';

const utf8Bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');
const METADATA_MAX_BYTES = 16 * 1024;

export const actionTypeSchema = z.enum(ACTION_TYPES);

// The examples' workflow instance and suggestion (the instance as in the workflows module's).
const instanceId = '5f0c6d1e-8a9b-4c3d-9e2f-1a2b3c4d5e6f';
const suggestionId = '8e1f2a3b-4c5d-4e6f-9a0b-1c2d3e4f5a6b';

export const actionSchema = z
  .object({
    type: actionTypeSchema,
    label: z.string(),
    safety: z.enum(SAFETIES),
    autoExecutable: z.boolean(),
    params: jsonObject,
  })
  .meta({ id: 'SuggestionAction' });

export const suggestionSchema = z
  .object({
    id: z.uuid(),
    type: z.enum(SUGGESTION_TYPES),
    message: z.string(),
    confidence: z.number().min(0).max(1),
    metadata: jsonObject,
    actions: z.array(actionSchema).describe('the first is the suggested one; each also offers CANCEL'),
    timestamp: z.iso.datetime(),
    ttl: z.number().int().describe('seconds from timestamp'),
    priority: z.number().int().describe('higher is more important'),
    context: z.object({
      contextId: z.string(),
      instanceId: z.uuid().optional(),
      channelId: z.string().optional(),
      userId: z.number().int(),
      protocolId: z.string().optional(),
      state: z.string().optional(),
    }),
    status: z.enum(STATUSES),
    expiredReason: z.enum(EXPIRED_REASONS).nullable(),
    actionType: actionTypeSchema.nullable().describe('the action executed, if any'),
    autoExecuted: z.boolean(),
    responseTimeMs: z.number().nullable().describe('from the timestamp to the first answer'),
    executedAt: z.iso.datetime().nullable(),
    executionTimeMs: z.number().nullable(),
    error: jsonObject.nullable().describe('the problem of the last refused execution'),
    undoneAt: z.iso.datetime().nullable(),
  })
  .meta({
    id: 'Suggestion',
    examples: [
      {
        id: suggestionId,
        type: 'TRANSITION_STATE',
        message: 'Move the workflow from intake to execution',
        confidence: 0.8,
        metadata: { source: 'trigger', from: 'intake', targetState: 'execution' },
        actions: [
          {
            type: 'TRANSITION',
            label: 'Move to execution',
            safety: 'REQUIRES_CONFIRMATION',
            autoExecutable: false,
            params: { targetState: 'execution' },
          },
          { type: 'CANCEL', label: 'Dismiss', safety: 'NEVER_AUTO', autoExecutable: false, params: {} },
        ],
        timestamp: '2025-05-01T09:30:00.000Z',
        ttl: 3600,
        priority: 60,
        context: {
          contextId: instanceId,
          instanceId,
          userId: 42,
          protocolId: 'observer_onboarding_v1',
          state: 'intake',
        },
        status: 'active',
        expiredReason: null,
        actionType: null,
        autoExecuted: false,
        responseTimeMs: null,
        executedAt: null,
        executionTimeMs: null,
        error: null,
        undoneAt: null,
      },
    ],
  });
export type Suggestion = z.infer<typeof suggestionSchema>;

/** A context id: a workflow instance id, `conversation:<id>` (the caller's), else a chat-platform
 * channel id; never `config` or `history`. */
export const contextIdSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[^\s/]+$/, 'no spaces or slashes')
  .refine((v) => parseContextId(v) !== null, {
    message: 'a workflow instance id, conversation:<id>, or a channel id (not config or history)',
  })
  .meta({ examples: [instanceId] });

export const contextParam = z.object({ contextId: contextIdSchema });
export const suggestionParam = z.object({
  contextId: contextIdSchema,
  id: z.uuid().meta({ examples: [suggestionId] }),
});

export const listQuery = z.object({
  message: z
    .string()
    .max(4000)
    .optional()
    .describe('text whose intent is analysed where the context has no workflow and no protocol'),
});

export const autoExecutedSchema = z.object({ suggestion: suggestionSchema, result: z.unknown() });
export const listResponse = z.object({
  contextId: z.string(),
  suggestions: z.array(suggestionSchema).describe('active, by priority, confidence, newest; at most 10'),
  autoExecuted: z.array(autoExecutedSchema),
});

export const executeBody = z
  .strictObject({
    suggestionId: z.uuid(),
    actionType: actionTypeSchema.optional().describe('one of the actions offered; default the first'),
    params: jsonObject
      .refine((m) => utf8Bytes(m) <= METADATA_MAX_BYTES, { message: 'params are at most 16 KiB of JSON' })
      .optional()
      .describe('ATTACH_EVIDENCE: description, proofUrl; REVIEW: approve, notes?; APPROVE: note?'),
  })
  .meta({ examples: [{ suggestionId, actionType: 'TRANSITION' }] });
export type ExecuteInput = z.infer<typeof executeBody>;
export const executeResponse = z.object({
  suggestion: suggestionSchema,
  result: z.unknown().describe("the operation's answer, as its own endpoint gives it"),
  followUps: z.array(suggestionSchema),
});

export const clearBody = z
  .strictObject({ suggestionId: z.uuid().optional().describe('one suggestion; without it, all open ones') })
  .meta({ examples: [{ suggestionId }] })
  .nullish()
  .transform((v) => v ?? {});
export const clearResponse = z.object({ cleared: z.number().int() });

export const putBody = z
  .strictObject({
    status: z.enum(['accepted', 'declined']).optional(),
    priority: z.number().int().min(0).max(100).optional(),
    metadata: jsonObject
      .refine((m) => utf8Bytes(m) <= METADATA_MAX_BYTES, { message: 'metadata is at most 16 KiB of JSON' })
      .optional()
      .describe('custom fields, merged into the metadata'),
  })
  .meta({ examples: [{ status: 'accepted', priority: 80, metadata: { note: 'after the review' } }] });
export type PutInput = z.infer<typeof putBody>;

export const undoResponse = z.object({ suggestion: suggestionSchema, result: z.unknown() });

export const configSchema = z
  .object({
    autoRunOrchestrator: z.boolean(),
    autoTransitionOnGuard: z.boolean(),
    autoSuggestNextStep: z.boolean(),
    requireConfirmationFor: z.array(actionTypeSchema),
    neverAutoExecute: z.array(actionTypeSchema),
    undoWindowMinutes: z.number().int().min(0).max(1440),
  })
  .meta({ id: 'SuggestionConfig' });
export const configResponse = configSchema
  .extend({
    decisions: z
      .record(actionTypeSchema, z.boolean())
      .describe('per action type: whether it runs without asking, with its default flag'),
  })
  .meta({
    id: 'SuggestionConfigView',
    examples: [
      {
        autoRunOrchestrator: true,
        autoTransitionOnGuard: false,
        autoSuggestNextStep: true,
        requireConfirmationFor: ['APPROVE'],
        neverAutoExecute: [],
        undoWindowMinutes: 5,
        decisions: {
          EXECUTE: false,
          VIEW: true,
          APPROVE: false,
          CANCEL: false,
          SHOW_STATUS: true,
          ASK_QUESTIONS: false,
          TRANSITION: false,
          ATTACH_EVIDENCE: false,
          REVIEW: false,
        },
      },
    ],
  });
export const putConfigBody = configSchema
  .partial()
  .strict()
  .extend({
    requireConfirmationFor: z.array(actionTypeSchema).max(ACTION_TYPES.length).optional(),
    neverAutoExecute: z.array(actionTypeSchema).max(ACTION_TYPES.length).optional(),
  })
  .meta({
    description: 'fields left out keep their values',
    examples: [{ autoTransitionOnGuard: true, undoWindowMinutes: 10 }],
  });
export type PutConfigInput = z.infer<typeof putConfigBody>;

export const historyQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) });
export const historyResponse = z.object({ history: z.array(suggestionSchema).describe('newest first') });
export const channelParam = z.object({
  channelId: z
    .string()
    .min(1)
    .max(100)
    .meta({ examples: ['1203948576012345678'] }),
});
export const userParam = z.object({
  userId: z.coerce
    .number()
    .int()
    .positive()
    .meta({ examples: [42] }),
});
export const instanceParam = z.object({ instanceId: z.uuid().meta({ examples: [instanceId] }) });
