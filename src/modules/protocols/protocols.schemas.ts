// Protocol records and routing (spec "Protocols and routing"; contract: "Protocols and
// conversations"). One schema per shape: HTTP validation, OpenAPI and the stored definition.
import { z } from 'zod';

/** spec "Versioning" 2: protocol ids carry a version suffix (`_v1`). */
export const PROTOCOL_ID_PATTERN = /^[a-z][a-z0-9_]*_v[1-9][0-9]*$/;
export const protocolIdSchema = z
  .string()
  .max(100)
  .regex(PROTOCOL_ID_PATTERN, 'a protocol id is lower_snake_case ending in a version suffix such as _v1');

export const PROTOCOL_CATEGORIES = ['PRIVATE', 'TECH', 'NEUTRAL', 'SYSTEM', 'PUBLIC', 'CUSTOM'] as const;
export type ProtocolCategory = (typeof PROTOCOL_CATEGORIES)[number];
export const protocolCategorySchema = z.enum(PROTOCOL_CATEGORIES);

/** `{{name}}` placeholders and tool names share this shape. */
export const NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;

export const capabilitiesSchema = z
  .object({
    memoryAccess: z
      .enum(['full', 'standard', 'limited'])
      .describe(
        'full: every memory tier with the largest retrieval budget; standard: every tier; limited: world knowledge and the character only, no personal history',
      ),
    adminAccess: z.boolean().describe('the turn may discuss administrative and diagnostic detail'),
    observer: z.boolean().describe('observer capabilities: instances, timelines, system state'),
  })
  .strict();
export type Capabilities = z.infer<typeof capabilitiesSchema>;

const toolsSchema = z
  .array(z.union([z.literal('*'), z.string().regex(NAME_PATTERN, 'a tool name is letters, digits and _')]))
  .max(50)
  .refine((t) => !t.includes('*') || t.length === 1, { message: '"*" (every tool) stands alone' })
  .describe('names of the chat tools this protocol allows; ["*"] allows every tool; [] none');

const overridesSchema = z
  .record(z.string().regex(NAME_PATTERN, 'a placeholder name is letters, digits and _'), z.string().max(8000))
  .refine((o) => Object.keys(o).length <= 50, { message: 'at most 50 overrides' })
  .describe('values for the template placeholders `{{name}}` this protocol defines');

const commonFields = {
  name: z.string().trim().min(1).max(100),
  description: z.string().max(2000).default(''),
  tone: z.string().trim().max(500).default('').describe('replaces {{tone}}'),
  rules: z
    .array(z.string().trim().min(1).max(2000))
    .max(50)
    .default([])
    .describe('appended to the prompt in order'),
  tools: toolsSchema.default([]),
  overrides: overridesSchema.default({}),
  capabilities: capabilitiesSchema.default({ memoryAccess: 'standard', adminAccess: false, observer: false }),
  workflow: z
    .object({ machineId: protocolIdSchema.describe('the workflow state machine definition id') })
    .strict()
    .optional()
    .describe('set on a workflow protocol (for example observer_onboarding_v1)'),
};

const stringFields = {
  kind: z.literal('string'),
  template: z
    .string()
    .min(1)
    .max(32 * 1024)
    .describe('the full prompt template'),
};
const referenceFields = {
  kind: z.literal('reference'),
  base: protocolIdSchema.describe('a string-based protocol whose template this one uses'),
};

export const protocolDefinitionSchema = z.discriminatedUnion('kind', [
  z.object({ ...stringFields, ...commonFields }).strict(),
  z.object({ ...referenceFields, ...commonFields }).strict(),
]);
/** A validated definition, as stored (the id lives in its own column). */
export type ProtocolDefinition = z.infer<typeof protocolDefinitionSchema>;

export const createProtocolBody = z
  .discriminatedUnion('kind', [
    z.object({ id: protocolIdSchema, ...stringFields, ...commonFields }).strict(),
    z.object({ id: protocolIdSchema, ...referenceFields, ...commonFields }).strict(),
  ])
  .meta({
    id: 'ProtocolCreate',
    examples: [
      {
        id: 'harbour_guide_v1',
        kind: 'reference',
        base: 'assistant_base_v1',
        name: 'Harbour guide',
        description: 'Friendly guide for new players in the harbour.',
        tone: 'warm and brief',
        rules: ['Never reveal quest solutions.'],
        tools: ['lookupMemory'],
      },
    ],
  });

export const updateProtocolBody = z
  .discriminatedUnion('kind', [
    z.object({ id: protocolIdSchema.optional(), ...stringFields, ...commonFields }).strict(),
    z.object({ id: protocolIdSchema.optional(), ...referenceFields, ...commonFields }).strict(),
  ])
  .meta({
    id: 'ProtocolUpdate',
    examples: [
      {
        kind: 'reference',
        base: 'assistant_base_v1',
        name: 'Harbour guide',
        tone: 'warm, brief, a little playful',
        rules: ['Never reveal quest solutions.'],
        tools: ['lookupMemory'],
      },
    ],
  });

export const protocolSchema = z
  .object({
    id: z.string(),
    category: protocolCategorySchema,
    version: z.number().int(),
    builtin: z.boolean(),
    kind: z.enum(['string', 'reference']),
    name: z.string(),
    description: z.string(),
    template: z.string().nullable(),
    base: z.string().nullable(),
    tone: z.string(),
    rules: z.array(z.string()),
    tools: z.array(z.string()),
    overrides: z.record(z.string(), z.string()),
    capabilities: capabilitiesSchema,
    workflow: z.object({ machineId: z.string() }).nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({
    id: 'Protocol',
    examples: [
      {
        id: 'harbour_guide_v1',
        category: 'CUSTOM',
        version: 1,
        builtin: false,
        kind: 'reference',
        name: 'Harbour guide',
        description: 'Friendly guide for new players in the harbour.',
        template: null,
        base: 'assistant_base_v1',
        tone: 'warm and brief',
        rules: ['Never reveal quest solutions.'],
        tools: ['lookupMemory'],
        overrides: {},
        capabilities: { memoryAccess: 'standard', adminAccess: false, observer: false },
        workflow: null,
        createdAt: '2025-05-01T09:30:00.000Z',
        updatedAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });
export type ProtocolView = z.infer<typeof protocolSchema>;

export const protocolListResponse = z.object({ protocols: z.array(protocolSchema) });
export const protocolIdParam = z.object({ id: protocolIdSchema.meta({ examples: ['tech_protocol_v1'] }) });

export const personaTypeSchema = z.string().trim().min(1).max(64);

export const routingQuery = z.object({
  channelId: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .describe('the chat-platform channel the conversation happens in'),
  userId: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .describe('admins only: preview routing for this user'),
  personaType: personaTypeSchema
    .optional()
    .describe("admins only: preview routing for this persona type (otherwise the server's own)"),
});

export const routingResponse = z
  .object({
    protocolId: z.string(),
    protocol: protocolCategorySchema,
    enforced: z.boolean().describe('true when nothing (not even a channel) can override the choice'),
    reason: z.string(),
  })
  .meta({
    id: 'ProtocolRouting',
    examples: [
      {
        protocolId: 'public_protocol_v1',
        protocol: 'PUBLIC',
        enforced: false,
        reason: 'public account: the public protocol',
      },
    ],
  });
