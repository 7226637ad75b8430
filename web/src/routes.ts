// The console's addresses, in one table: it draws the main navigation and the admin sections, picks
// the page the shell shows, and tells the server which paths answer index.html on a reload or a
// deep link (src/platform/http/web.ts imports this file). So it stays plain data: no React, no
// browser API, no import, which lets both the console's build and the server's type check read it.
// Adding a page: a row here, and its component in the shell's page map (App.tsx), which the type
// checker asks for.

/** Who may open a route: anyone (the pages mails and external sign-in link to), a signed-in
 * person, or an admin (the server's word: the profile's `isAdmin`). */
export type Access = 'anyone' | 'signed-in' | 'admin';

interface RouteRow {
  path: string;
  page: string;
  access: Access;
  /** Its link in the main navigation, if it has one. */
  nav?: string;
  /** One of the admin sections: its link in their navigation and its page title. */
  section?: { link: string; title: string };
  /** One of the character studio's pages: its link in the studio's navigation and its title. */
  studio?: { link: string; title: string };
}

export const ROUTES = [
  { path: '/chat', page: 'chat', access: 'signed-in', nav: 'Chat' },
  { path: '/memory', page: 'memory', access: 'signed-in', nav: 'Memory' },
  { path: '/observer', page: 'observer', access: 'signed-in', nav: 'Observer' },
  { path: '/workflows', page: 'workflows', access: 'signed-in', nav: 'Workflows' },
  { path: '/dashboard', page: 'dashboard', access: 'signed-in', nav: 'Dashboard' },
  {
    path: '/studio',
    page: 'studio-characters',
    access: 'admin',
    nav: 'Studio',
    studio: { link: 'Characters', title: 'Characters' },
  },
  {
    path: '/studio/knowledge',
    page: 'studio-knowledge',
    access: 'admin',
    studio: { link: 'Knowledge and training', title: 'Knowledge and training' },
  },
  { path: '/studio/try', page: 'studio-try', access: 'admin', studio: { link: 'Try it', title: 'Try it' } },
  {
    path: '/studio/game',
    page: 'studio-game',
    access: 'admin',
    studio: { link: 'Game data', title: 'The game’s data' },
  },
  {
    path: '/admin',
    page: 'admin-overview',
    access: 'admin',
    nav: 'Admin',
    section: { link: 'Overview', title: 'Admin' },
  },
  {
    path: '/admin/scheduled-tasks',
    page: 'scheduled-tasks',
    access: 'admin',
    section: { link: 'Scheduled tasks', title: 'Scheduled tasks' },
  },
  {
    path: '/admin/audit-log',
    page: 'audit-log',
    access: 'admin',
    section: { link: 'Audit log', title: 'Audit log' },
  },
  { path: '/verify-email', page: 'verify-email', access: 'anyone' },
  { path: '/reset-password', page: 'reset-password', access: 'anyone' },
  { path: '/auth/callback', page: 'auth-callback', access: 'anyone' },
] as const satisfies readonly RouteRow[];

export type Route = (typeof ROUTES)[number];
export type PageName = Route['page'];
/** The pages anyone may open, signed in or not. */
export type PublicPageName = Extract<Route, { access: 'anyone' }>['page'];
/** The pages of a signed-in person (an admin's among them). */
export type SignedInPageName = Exclude<PageName, PublicPageName>;

/** Where the console starts, and what a path it does not know shows. */
export const HOME = ROUTES[0];

/** The paths that show the home page without being its address: the root and the sign-in page. */
export const HOME_ALIASES = ['/', '/signin'] as const;

/** Every path the console answers: the server serves index.html at each. */
export const CONSOLE_PATHS: readonly string[] = [...HOME_ALIASES, ...ROUTES.map((r) => r.path)];

/** The route at `path`, the home page at one of its aliases, none elsewhere. */
export function routeAt(path: string): Route | undefined {
  return ROUTES.find((r) => r.path === path) ?? (HOME_ALIASES.some((a) => a === path) ? HOME : undefined);
}

/** The route a path shows: its own, else the home page. */
export function routeOf(path: string): Route {
  return routeAt(path) ?? HOME;
}

/** The main navigation's links: every route that has one, the admin's to admins only. */
export function mainLinks(admin: boolean): { path: string; label: string }[] {
  return ROUTES.flatMap((r) =>
    'nav' in r && (admin || r.access !== 'admin') ? [{ path: r.path, label: r.nav }] : [],
  );
}

/** The admin sections, in the order of their navigation. */
export const ADMIN_SECTIONS = ROUTES.flatMap((r) => ('section' in r ? [{ ...r.section, path: r.path }] : []));

/** The character studio's pages, in the order of their navigation. */
export const STUDIO_SECTIONS = ROUTES.flatMap((r) => ('studio' in r ? [{ ...r.studio, path: r.path }] : []));

/** The main navigation's link that is current on `path`: the link of its own route, or of the
 * area it belongs to (an admin section lights "Admin", a studio page "Studio"); none on a page
 * outside the navigation. */
export function currentLink(path: string): string | null {
  const route = routeAt(path);
  if (!route) return null;
  if ('nav' in route) return route.path;
  if ('section' in route) return ADMIN_SECTIONS[0]?.path ?? null;
  if ('studio' in route) return STUDIO_SECTIONS[0]?.path ?? null;
  return null;
}
