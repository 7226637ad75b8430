import { z } from 'zod';
import { API_SCOPES, CLIENT_TYPES } from '../../platform/security/identity.rules.js';
import { MAX_PASSWORD, MIN_PASSWORD, profileSchema } from '../users/index.js';

// NIST 800-63B: length is the rule (8 to 256); no composition rules.
export const passwordSchema = z
  .string()
  .min(MIN_PASSWORD, `must be at least ${MIN_PASSWORD} characters`)
  .max(MAX_PASSWORD, `must be at most ${MAX_PASSWORD} characters`);
export const emailSchema = z.string().trim().max(254).pipe(z.email());
export const clientTypeSchema = z.enum(CLIENT_TYPES);
export const scopeSchema = z.enum(API_SCOPES);

export const registerBody = z
  .object({
    email: emailSchema,
    password: passwordSchema,
    name: z.string().trim().min(1).max(100).optional(),
  })
  .meta({ examples: [{ email: 'ada@example.com', password: 'a long password', name: 'Ada' }] });

// Login does not re-apply the password rules: a wrong password is "invalid credentials", not 400.
export const loginBody = z
  .object({
    email: z.string().trim().min(1).max(254),
    password: z.string().min(1).max(1024),
    clientType: clientTypeSchema.default('web_portal'),
  })
  .meta({ examples: [{ email: 'ada@example.com', password: 'a long password', clientType: 'web_portal' }] });

export const tokenBody = z
  .object({
    email: z.string().trim().min(1).max(254),
    password: z.string().min(1).max(1024),
    clientType: clientTypeSchema,
  })
  .meta({ examples: [{ email: 'ada@example.com', password: 'a long password', clientType: 'game_client' }] });

export const refreshBody = z
  .object({ refreshToken: z.string().min(1).max(512) })
  .meta({ examples: [{ refreshToken: 'rt_9cQ2fV0yq0Zk4m3xLw7PpA' }] });

export const tokenResponse = z
  .object({
    accessToken: z.string(),
    refreshToken: z.string(),
    tokenType: z.literal('Bearer'),
    expiresIn: z.number().int().describe('access token lifetime in seconds'),
    user: profileSchema,
  })
  .meta({ id: 'TokenResponse' });
export type TokenResponse = z.infer<typeof tokenResponse>;

export const createApiKeyBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    scopes: z.array(scopeSchema).min(1).max(API_SCOPES.length),
    userId: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'the account the key belongs to (an mcp key acts as it); default: the administrator creating it',
      ),
  })
  .meta({
    examples: [
      { name: 'world platform', scopes: ['sync:read', 'sync:write'] },
      { name: 'my editor', scopes: ['mcp'], userId: 42 },
    ],
  });

export const apiKeySchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    scopes: z.array(scopeSchema),
    prefix: z.string(),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
    revokedAt: z.iso.datetime().nullable(),
  })
  .meta({
    id: 'ApiKey',
    examples: [
      {
        id: 3,
        name: 'world platform',
        scopes: ['sync:read', 'sync:write'],
        prefix: 'x7Kq2pLm',
        createdAt: '2025-05-01T09:30:00.000Z',
        lastUsedAt: '2025-05-01T09:30:00.000Z',
        revokedAt: null,
      },
    ],
  });
export type ApiKeyDto = z.infer<typeof apiKeySchema>;

export const createdApiKeySchema = z.object({
  id: z.number().int(),
  name: z.string(),
  scopes: z.array(scopeSchema),
  prefix: z.string(),
  key: z.string().describe('shown once; only a hash is stored'),
  createdAt: z.iso.datetime(),
});
