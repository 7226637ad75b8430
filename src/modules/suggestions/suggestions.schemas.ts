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
  .meta({ id: 'Suggestion' });
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
  });

export const contextParam = z.object({ contextId: contextIdSchema });
export const suggestionParam = z.object({ contextId: contextIdSchema, id: z.uuid() });

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

export const executeBody = z.strictObject({
  suggestionId: z.uuid(),
  actionType: actionTypeSchema.optional().describe('one of the actions offered; default the first'),
  params: jsonObject
    .refine((m) => utf8Bytes(m) <= METADATA_MAX_BYTES, { message: 'params are at most 16 KiB of JSON' })
    .optional()
    .describe('ATTACH_EVIDENCE: description, proofUrl; REVIEW: approve, notes?; APPROVE: note?'),
});
export type ExecuteInput = z.infer<typeof executeBody>;
export const executeResponse = z.object({
  suggestion: suggestionSchema,
  result: z.unknown().describe("the operation's answer, as its own endpoint gives it"),
  followUps: z.array(suggestionSchema),
});

export const clearBody = z
  .strictObject({ suggestionId: z.uuid().optional().describe('one suggestion; without it, all open ones') })
  .nullish()
  .transform((v) => v ?? {});
export const clearResponse = z.object({ cleared: z.number().int() });

export const putBody = z.strictObject({
  status: z.enum(['accepted', 'declined']).optional(),
  priority: z.number().int().min(0).max(100).optional(),
  metadata: jsonObject
    .refine((m) => utf8Bytes(m) <= METADATA_MAX_BYTES, { message: 'metadata is at most 16 KiB of JSON' })
    .optional()
    .describe('custom fields, merged into the metadata'),
});
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
  .meta({ id: 'SuggestionConfigView' });
export const putConfigBody = configSchema
  .partial()
  .strict()
  .extend({
    requireConfirmationFor: z.array(actionTypeSchema).max(ACTION_TYPES.length).optional(),
    neverAutoExecute: z.array(actionTypeSchema).max(ACTION_TYPES.length).optional(),
  })
  .describe('fields left out keep their values');
export type PutConfigInput = z.infer<typeof putConfigBody>;

export const historyQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) });
export const historyResponse = z.object({ history: z.array(suggestionSchema).describe('newest first') });
export const channelParam = z.object({ channelId: z.string().min(1).max(100) });
export const userParam = z.object({ userId: z.coerce.number().int().positive() });
export const instanceParam = z.object({ instanceId: z.uuid() });
