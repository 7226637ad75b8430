import { z } from 'zod';
import { pageMeta, pageQuery } from '../../platform/http/pagination.js';
import { ACCOUNT_TYPES, ROLES } from '../../platform/security/identity.rules.js';

export const roleSchema = z.enum(ROLES);
export const accountTypeSchema = z.enum(ACCOUNT_TYPES);
export const userIdParam = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .meta({ examples: [42] }),
});

const profileExample = {
  id: 42,
  email: 'ada@example.com',
  name: 'Ada',
  role: 'carbon',
  accountType: 'public',
  energy_coins: 120,
  emailVerified: true,
  createdAt: '2025-05-01T09:30:00.000Z',
} as const;

export const profileSchema = z
  .object({
    id: z.number().int(),
    email: z.string().nullable(),
    name: z.string(),
    role: roleSchema,
    accountType: accountTypeSchema,
    energy_coins: z.number().int(),
    emailVerified: z.boolean(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'UserProfile', examples: [profileExample] });
export type Profile = z.infer<typeof profileSchema>;

/** The caller's own profile: the profile plus whether the server lets them in as an admin. */
export const ownProfileSchema = profileSchema
  .extend({
    isAdmin: z
      .boolean()
      .describe(
        'whether the caller may use the admin routes: role cso, silicon + developer, or an id in ADMIN_USER_IDS',
      ),
  })
  .meta({ id: 'OwnProfile', examples: [{ ...profileExample, isAdmin: false }] });

export const adminUsersQuery = pageQuery.extend({
  q: z.string().max(200).optional().describe('case-insensitive match on email or name'),
  role: roleSchema.optional(),
  accountType: accountTypeSchema.optional(),
});

export const adminUsersResponse = z.object({
  users: z.array(profileSchema),
  ...pageMeta,
});

export const patchUserBody = z
  .object({
    role: roleSchema.optional(),
    accountType: accountTypeSchema.optional(),
    name: z.string().trim().min(1).max(100).optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one of role, accountType, name' })
  .meta({ examples: [{ role: 'silicon', accountType: 'developer' }] });
