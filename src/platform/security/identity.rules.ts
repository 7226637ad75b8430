// spec: "Identity" (roles, account types, allowed combinations) and "Access zones" (who is admin).
export const ROLES = ['carbon', 'silicon', 'cso'] as const;
export const ACCOUNT_TYPES = ['core_primary', 'developer', 'npc', 'public'] as const;
export const CLIENT_TYPES = [
  'web_portal',
  'chat_platform',
  'api',
  'game_client',
  'mobile',
  'vr',
  'ar',
] as const;
/** API key scopes: the sync endpoints for a world platform; `chat-platform:command` for a chat
 * platform's bot, acting as the platform user a command names (POST /api/chat-platform/commands);
 * `mcp` for the MCP endpoint (/mcp), acting as the account the key belongs to; `players:write` for a
 * game server signing its players in (POST /api/sync/players). */
export const API_SCOPES = [
  'sync:read',
  'sync:write',
  'chat-platform:command',
  'mcp',
  'players:write',
] as const;

export type Role = (typeof ROLES)[number];
export type AccountType = (typeof ACCOUNT_TYPES)[number];
export type ClientType = (typeof CLIENT_TYPES)[number];
export type ApiScope = (typeof API_SCOPES)[number];

/** spec: "Role and account type combinations". */
export const ALLOWED_ACCOUNT_TYPES: Record<Role, readonly AccountType[]> = {
  carbon: ['public', 'core_primary'],
  silicon: ['developer', 'npc'],
  cso: ['public'],
};

export function isAllowedCombination(role: Role, accountType: AccountType): boolean {
  return ALLOWED_ACCOUNT_TYPES[role].includes(accountType);
}

/** spec: admin access is role cso always; silicon + developer always; else the configured list. */
export function isAdmin(
  user: { id: number; role: Role; accountType: AccountType },
  adminUserIds: readonly number[],
): boolean {
  if (user.role === 'cso') return true;
  if (user.role === 'silicon' && user.accountType === 'developer') return true;
  return adminUserIds.includes(user.id);
}
