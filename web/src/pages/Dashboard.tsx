// Dashboard: the service's health as a word (healthy, warning, critical), counts and a chart of
// users by kind; for non-admins, their own account.
import { useEffect, useState } from 'react';
import { api, type Schemas } from '../api/client';
import { isAdmin, type SessionUser } from '../lib/tokens';
import { Page } from '../ui';

export function healthWord(h: Schemas['AdminHealth'] | undefined): 'healthy' | 'warning' | 'critical' {
  if (!h || !h.database.ok) return 'critical';
  const failed = h.jobs.queues.some((q) => q.failed > 0);
  return h.status === 'ok' && !failed && h.database.migrations.pending === 0 ? 'healthy' : 'warning';
}

export default function Dashboard({ user }: { user: SessionUser }) {
  const admin = isAdmin(user);
  const [health, setHealth] = useState<Schemas['AdminHealth']>();
  const [stats, setStats] = useState<Schemas['SystemStats']>();
  const [instances, setInstances] = useState<Schemas['Instance'][]>([]);
  const [profile, setProfile] = useState<Schemas['UserProfile']>();

  useEffect(() => {
    void api.GET('/api/user/profile').then(({ data }) => setProfile(data));
    if (!admin) return;
    void api.GET('/api/admin/health').then(({ data }) => setHealth(data));
    void api.GET('/api/admin/stats').then(({ data }) => setStats(data));
    void api.GET('/api/admin/instances').then(({ data }) => setInstances(data?.instances ?? []));
  }, [admin]);

  const word = healthWord(health);
  const byLevel = count(instances.map((i) => `Level ${i.level}`));
  const bySource = count(instances.map((i) => `Source: ${i.source}`));
  const users = stats?.users.map((u) => [`${u.role} / ${u.accountType}`, u.count] as const) ?? [];

  return (
    <Page title="Dashboard">
      <div className="grid">
        <div className="card">
          <h2>You</h2>
          <p>{profile?.name}</p>
          <p className="muted small">{profile?.email}</p>
          <p>
            Energy coins: <strong>{profile?.energy_coins ?? '…'}</strong>
          </p>
        </div>
        {admin && (
          <>
            <div className="card">
              <h2>Health</h2>
              <p>
                Status: <strong className={`health ${word}`}>{health ? word : '…'}</strong>
              </p>
              <p className="muted small">
                {health &&
                  `version ${health.version} · ${health.database.kind} · up ${Math.round(health.uptimeSeconds)} s`}
              </p>
            </div>
            <div className="card">
              <h2>Activity ({stats?.windowHours ?? '…'} h)</h2>
              <p>Conversations: {stats?.conversations ?? '…'}</p>
              <p>
                Messages: {stats?.messages.total ?? '…'} ({stats?.messages.failed ?? 0} failed)
              </p>
              <p>Timeline events: {stats?.timelineEvents.total ?? '…'}</p>
            </div>
            <div className="card">
              <h2>Instances</h2>
              <Table rows={[...byLevel, ...bySource]} label="Instances by level and source" />
            </div>
            <div className="card wide">
              <h2>Users by kind</h2>
              <BarChart rows={users} label="Users by role and account type" />
            </div>
          </>
        )}
      </div>
    </Page>
  );
}

function count(keys: string[]): (readonly [string, number])[] {
  const m = new Map<string, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return [...m.entries()];
}

function Table({ rows, label }: { rows: (readonly [string, number])[]; label: string }) {
  return (
    <table tabIndex={0} aria-label={label}>
      <tbody>
        {rows.map(([k, v]) => (
          <tr key={k}>
            <th scope="row">{k}</th>
            <td>{v}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function BarChart({ rows, label }: { rows: (readonly [string, number])[]; label: string }) {
  const max = Math.max(1, ...rows.map(([, v]) => v));
  const h = 26;
  return (
    <svg
      role="img"
      aria-label={`${label}: ${rows.map(([k, v]) => `${k} ${v}`).join(', ')}`}
      width="100%"
      preserveAspectRatio="xMinYMin meet"
      className="chart"
      height={rows.length * h + 4}
      viewBox={`0 0 400 ${rows.length * h + 4}`}
    >
      {rows.map(([k, v], i) => (
        <g key={k} transform={`translate(0 ${i * h})`}>
          <text x="0" y="17" fontSize="12" fill="#1f2933">
            {k}
          </text>
          <rect x="170" y="4" height="18" width={(v / max) * 190} fill="#2557a7" rx="3" />
          <text x={176 + (v / max) * 190} y="17" fontSize="12" fill="#1f2933">
            {v}
          </text>
        </g>
      ))}
    </svg>
  );
}
