/** Route config shared by every /api/auth/* route: public, and one rate-limit window per IP for
 * all of them together (contract: "Limits"): the same key makes the routes share it. */
export function publicAuthRoute(authPerMinute: number) {
  return {
    auth: 'public' as const,
    rateLimit: {
      max: authPerMinute,
      timeWindow: 60_000,
      keyGenerator: (req: { ip: string }) => `auth:${req.ip}`,
    },
  };
}
