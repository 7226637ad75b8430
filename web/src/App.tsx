// The shell: restores the session (a refresh-token rotation), routes by path, and shows the
// navigation to a signed-in person ("Admin" to admins only).
import { lazy, Suspense, useEffect, useState } from 'react';
import { signOut, tokens } from './api/client';
import { isAdmin, type SessionUser } from './lib/tokens';
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

  useEffect(() => tokens.onChange(setUser), []);
  useEffect(() => {
    if (!restoring) return;
    void tokens.accessToken().finally(() => setRestoring(false));
  }, [restoring]);

  if (path === '/verify-email')
    return (
      <Shell user={user} path={path}>
        <VerifyEmail />
      </Shell>
    );
  if (path === '/reset-password')
    return (
      <Shell user={user} path={path}>
        <ResetPassword />
      </Shell>
    );
  if (path === '/auth/callback')
    return (
      <Shell user={user} path={path}>
        <AuthCallback />
      </Shell>
    );
  if (restoring)
    return (
      <Shell user={null} path={path}>
        <p className="muted">Loading…</p>
      </Shell>
    );
  if (!user)
    return (
      <Shell user={null} path={path}>
        <SignIn />
      </Shell>
    );

  let page;
  switch (path) {
    case '/memory':
      page = <Memory />;
      break;
    case '/observer':
      page = <Observer user={user} />;
      break;
    case '/workflows':
      page = <Workflows />;
      break;
    case '/dashboard':
      page = <Dashboard user={user} />;
      break;
    case '/admin':
      page = isAdmin(user) ? <Admin /> : <p role="alert">Only admins may open this page.</p>;
      break;
    default:
      page = <Chat user={user} />;
  }
  return (
    <Shell user={user} path={path}>
      <Suspense fallback={<p className="muted">Loading…</p>}>{page}</Suspense>
    </Shell>
  );
}

function Shell({
  user,
  path,
  children,
}: {
  user: SessionUser | null;
  path: string;
  children: React.ReactNode;
}) {
  const current = path === '/' || path === '/signin' ? '/chat' : path;
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
            {isAdmin(user) && (
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
