// The shell: restores the session (a refresh-token rotation), shows the page of the path's route
// (routes.ts), and the navigation to a signed-in person ("Admin" to admins only, as the server
// decides it: the profile's `isAdmin`, which also counts ADMIN_USER_IDS; the role rule stands in
// until it loads).
import { lazy, Suspense, useEffect, useState, type ComponentType, type ReactNode } from 'react';
import { api, signOut, tokens } from './api/client';
import { isAdmin as isAdminByRole, type SessionUser } from './lib/tokens';
import { navigate, usePath } from './lib/router';
import { useRead } from './lib/useRead';
import { currentLink, mainLinks, routeOf, type PublicPageName, type SignedInPageName } from './routes';
import { Link } from './ui';
import { SignIn, VerifyEmail, ResetPassword, AuthCallback } from './pages/Auth';
import { AdminFrame } from './pages/admin/AdminFrame';
import { StudioFrame } from './pages/studio/StudioFrame';

export interface PageProps {
  user: SessionUser;
  admin: boolean;
}

/** The pages anyone may open: small, and shown before the session is restored. */
const PUBLIC_PAGES: Record<PublicPageName, ComponentType> = {
  'verify-email': VerifyEmail,
  'reset-password': ResetPassword,
  'auth-callback': AuthCallback,
};

/** A signed-in person's pages, each its own chunk, loaded when first shown. */
const PAGES: Record<SignedInPageName, ComponentType<PageProps>> = {
  chat: lazy(() => import('./pages/Chat')),
  memory: lazy(() => import('./pages/Memory')),
  observer: lazy(() => import('./pages/Observer')),
  workflows: lazy(() => import('./pages/Workflows')),
  dashboard: lazy(() => import('./pages/Dashboard')),
  'admin-overview': lazy(() => import('./pages/Admin')),
  'scheduled-tasks': lazy(() => import('./pages/admin/ScheduledTasks')),
  'audit-log': lazy(() => import('./pages/admin/AuditLog')),
  'studio-characters': lazy(() => import('./pages/studio/Characters')),
  'studio-knowledge': lazy(() => import('./pages/studio/Knowledge')),
  'studio-try': lazy(() => import('./pages/studio/TryIt')),
  'studio-game': lazy(() => import('./pages/studio/GameData')),
};

const loading = <p className="muted">Loading…</p>;

export function App() {
  const path = usePath();
  const [user, setUser] = useState<SessionUser | null>(tokens.user);
  const [restoring, setRestoring] = useState(!tokens.user && tokens.hasSession());
  const { admin, adminKnown } = useAdmin(user);

  useEffect(() => tokens.onChange(setUser), []);
  useEffect(() => {
    if (!restoring) return;
    void tokens.accessToken().finally(() => setRestoring(false));
  }, [restoring]);

  const route = routeOf(path);
  if (route.access === 'anyone') {
    const Public = PUBLIC_PAGES[route.page];
    return (
      <Shell user={user} admin={admin} path={path}>
        <Public />
      </Shell>
    );
  }
  if (restoring)
    return (
      <Shell user={null} admin={false} path={path}>
        {loading}
      </Shell>
    );
  if (!user)
    return (
      <Shell user={null} admin={false} path={path}>
        <SignIn />
      </Shell>
    );

  const Shown = PAGES[route.page];
  let page: ReactNode = <Shown user={user} admin={admin} />;
  if (route.access === 'admin' && !admin)
    page = adminKnown ? <p role="alert">Only admins may open this page.</p> : loading;
  // The sections share their frame, which stays while a section's chunk loads.
  else if ('section' in route)
    page = (
      <AdminFrame path={route.path}>
        <Suspense fallback={loading}>{page}</Suspense>
      </AdminFrame>
    );
  // So do the character studio's pages.
  else if ('studio' in route)
    page = (
      <StudioFrame path={route.path}>
        <Suspense fallback={loading}>{page}</Suspense>
      </StudioFrame>
    );
  return (
    <Shell user={user} admin={admin} path={path}>
      <Suspense fallback={loading}>{page}</Suspense>
    </Shell>
  );
}

/** Whether the signed-in person is an admin: the server's word once the profile is read (per user
 * id), the role rule until then; `adminKnown` is false while a non-admin role waits for it. */
function useAdmin(user: SessionUser | null) {
  const profile = useRead(user ? `profile:${user.id}` : null, () => api.GET('/api/user/profile')).data;
  const adminOf = profile && user && profile.id === user.id ? profile.isAdmin : null;
  const admin = user ? (adminOf ?? isAdminByRole(user)) : false;
  const adminKnown = Boolean(user && (adminOf !== null || isAdminByRole(user)));
  return { admin, adminKnown };
}

function Shell({
  user,
  admin,
  path,
  children,
}: {
  user: SessionUser | null;
  admin: boolean;
  path: string;
  children: ReactNode;
}) {
  const current = currentLink(path);
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Assistant</span>
        {user && (
          <nav aria-label="Main">
            {mainLinks(admin).map(({ path: to, label }) => (
              <Link key={to} to={to} current={current === to}>
                {label}
              </Link>
            ))}
          </nav>
        )}
        {user && (
          <div className="who">
            <span>{user.name || user.email}</span>
            <button
              type="button"
              className="secondary"
              onClick={() => void signOut().then(() => navigate('/', true))}
            >
              Sign out
            </button>
          </div>
        )}
      </header>
      <main id="main">{children}</main>
    </>
  );
}
