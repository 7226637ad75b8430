// The shell: restores the session (a refresh-token rotation), routes by path, and shows the
// navigation to a signed-in person ("Admin" to admins only, as the server decides it: the
// profile's `isAdmin`, which also counts ADMIN_USER_IDS; the role rule stands in until it loads).
import { lazy, Suspense, useEffect, useState } from 'react';
import { api, signOut, tokens } from './api/client';
import { isAdmin as isAdminByRole, type SessionUser } from './lib/tokens';
import { navigate, usePath } from './lib/router';
import { Link } from './ui';
import { SignIn, VerifyEmail, ResetPassword, AuthCallback } from './pages/Auth';

const Chat = lazy(() => import('./pages/Chat'));
const Memory = lazy(() => import('./pages/Memory'));
const Observer = lazy(() => import('./pages/Observer'));
const Workflows = lazy(() => import('./pages/Workflows'));
const Dashboard = lazy(() => import('./pages/Dashboard'));
const Admin = lazy(() => import('./pages/Admin'));

const NAV = [
  ['/chat', 'Chat'],
  ['/memory', 'Memory'],
  ['/observer', 'Observer'],
  ['/workflows', 'Workflows'],
  ['/dashboard', 'Dashboard'],
] as const;

export function App() {
  const path = usePath();
  const [user, setUser] = useState<SessionUser | null>(tokens.user);
  const [restoring, setRestoring] = useState(!tokens.user && tokens.hasSession());

  // The server's word on admin access, per signed-in user id.
  const [adminOf, setAdminOf] = useState<{ id: number; admin: boolean } | null>(null);

  useEffect(() => tokens.onChange(setUser), []);
  useEffect(() => {
    if (!user) return;
    let live = true;
    void api.GET('/api/user/profile').then(({ data }) => {
      if (live && data) setAdminOf({ id: data.id, admin: data.isAdmin });
    });
    return () => {
      live = false;
    };
  }, [user?.id]);
  const admin = user ? (adminOf?.id === user.id ? adminOf.admin : isAdminByRole(user)) : false;
  const adminKnown = Boolean(user && (adminOf?.id === user.id || isAdminByRole(user)));
  useEffect(() => {
    if (!restoring) return;
    void tokens.accessToken().finally(() => setRestoring(false));
  }, [restoring]);

  if (path === '/verify-email')
    return (
      <Shell user={user} admin={admin} path={path}>
        <VerifyEmail />
      </Shell>
    );
  if (path === '/reset-password')
    return (
      <Shell user={user} admin={admin} path={path}>
        <ResetPassword />
      </Shell>
    );
  if (path === '/auth/callback')
    return (
      <Shell user={user} admin={admin} path={path}>
        <AuthCallback />
      </Shell>
    );
  if (restoring)
    return (
      <Shell user={null} admin={false} path={path}>
        <p className="muted">Loading…</p>
      </Shell>
    );
  if (!user)
    return (
      <Shell user={null} admin={false} path={path}>
        <SignIn />
      </Shell>
    );

  let page;
  switch (path.startsWith('/admin/') ? '/admin' : path) {
    case '/memory':
      page = <Memory />;
      break;
    case '/observer':
      page = <Observer user={user} />;
      break;
    case '/workflows':
      page = <Workflows admin={admin} />;
      break;
    case '/dashboard':
      page = <Dashboard user={user} admin={admin} />;
      break;
    case '/admin':
      page = admin ? (
        <Admin path={path} />
      ) : adminKnown ? (
        <p role="alert">Only admins may open this page.</p>
      ) : (
        <p className="muted">Loading…</p>
      );
      break;
    default:
      page = <Chat user={user} admin={admin} />;
  }
  return (
    <Shell user={user} admin={admin} path={path}>
      <Suspense fallback={<p className="muted">Loading…</p>}>{page}</Suspense>
    </Shell>
  );
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
  children: React.ReactNode;
}) {
  const current = path === '/' || path === '/signin' ? '/chat' : path.startsWith('/admin/') ? '/admin' : path;
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Assistant</span>
        {user && (
          <nav aria-label="Main">
            {NAV.map(([to, label]) => (
              <Link key={to} to={to} current={current === to}>
                {label}
              </Link>
            ))}
            {admin && (
              <Link to="/admin" current={current === '/admin'}>
                Admin
              </Link>
            )}
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
