// Signed-out pages: sign in / create account, and the pages the mails and external login link to.
import { useEffect, useState, type FormEvent } from 'react';
import { api, describe, startSession } from '../api/client';
import { navigate } from '../lib/router';
import { useRead } from '../lib/useRead';
import { HOME, HOME_ALIASES } from '../routes';
import { Alert, Link, Page } from '../ui';

export function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const providers = (useRead('providers', () => api.GET('/api/auth/providers')).data?.providers ?? []).map(
    (p) => p.name,
  );

  async function run(kind: 'login' | 'register') {
    setBusy(true);
    setError(null);
    const failed = await startSession(kind, { email, password });
    setBusy(false);
    if (failed) setError(failed);
    else navigate(HOME_ALIASES.some((a) => a === location.pathname) ? HOME.path : location.pathname, true);
  }

  async function forgot() {
    setError(null);
    if (!email) {
      setError('Enter your email first.');
      return;
    }
    const res = await fetch('/api/auth/request-password-reset', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    if (res.ok) setNotice('If that account exists, a reset link is on its way.');
    else setError(describe(await res.json()));
  }

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run('login');
  };

  return (
    <Page title="Sign in">
      <form className="card narrow" onSubmit={submit}>
        <label>
          Email
          <input
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            autoComplete="current-password"
            required
            minLength={8}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <Alert message={error} />
        {notice && <p role="status">{notice}</p>}
        <div className="row">
          <button type="submit" disabled={busy}>
            Sign in
          </button>
          <button type="button" className="secondary" disabled={busy} onClick={() => void run('register')}>
            Create account
          </button>
        </div>
        <button type="button" className="link" onClick={() => void forgot()}>
          Forgot password?
        </button>
        {providers.length > 0 && (
          <nav aria-label="External sign-in" className="external">
            <p className="muted small">Or sign in with another account:</p>
            <ul className="list row wrap">
              {providers.map((name) => (
                // A full page load: the server sends the browser on to the provider.
                <li key={name}>
                  <a className="button-link" href={`/api/auth/${encodeURIComponent(name)}`}>
                    Sign in with {providerLabel(name)}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        )}
      </form>
    </Page>
  );
}

/** A provider's name as a person reads it: "google" → "Google". */
const providerLabel = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

const tokenParam = () => new URLSearchParams(location.search).get('token') ?? '';

export function VerifyEmail() {
  const [state, setState] = useState<string>('working');
  useEffect(() => {
    const token = tokenParam();
    if (!token) {
      setState('This link has no token.');
      return;
    }
    void fetch('/api/auth/verify-email', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    }).then(async (res) => setState(res.ok ? 'done' : describe(await res.json())));
  }, []);
  return (
    <Page title="Verify email">
      {state === 'working' && <p className="muted">Checking the link…</p>}
      {state === 'done' && (
        <p role="status">
          Your email is verified. <Link to="/">Continue</Link>
        </p>
      )}
      {state !== 'working' && state !== 'done' && <Alert message={state} />}
    </Page>
  );
}

export function ResetPassword() {
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    const res = await fetch('/api/auth/reset-password', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: tokenParam(), password }),
    });
    if (res.ok) setDone(true);
    else setError(describe(await res.json()));
  };
  return (
    <Page title="Choose a new password">
      {done ? (
        <p role="status">
          Your password is changed. <Link to="/">Sign in</Link>
        </p>
      ) : (
        <form className="card narrow" onSubmit={(e) => void submit(e)}>
          <label>
            New password
            <input
              type="password"
              autoComplete="new-password"
              required
              minLength={8}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </label>
          <Alert message={error} />
          <button type="submit">Set password</button>
        </form>
      )}
    </Page>
  );
}

/** External login lands here with `#code=` (traded once for tokens) or `#error=`. */
export function AuthCallback() {
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const hash = new URLSearchParams(location.hash.slice(1));
    history.replaceState(null, '', location.pathname);
    const code = hash.get('code');
    if (!code) {
      setError(`Sign-in failed: ${hash.get('error') ?? 'no code'}.`);
      return;
    }
    void startSession('exchange', { code }).then((failed) => {
      if (failed) setError(failed);
      else navigate('/chat', true);
    });
  }, []);
  return (
    <Page title="Signing in">{error ? <Alert message={error} /> : <p className="muted">One moment…</p>}</Page>
  );
}
