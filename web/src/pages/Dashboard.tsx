// Dashboard: the service's health as a word (healthy, warning, critical), counts and a chart of
// users by kind; an observer's country dashboard (its health, diary compliance, projects,
// instances by level, source and persona, with charts) for admins and observers' owners; for
// everyone, their own account.
import { useState } from 'react';
import { api, type Schemas } from '../api/client';
import { useRead } from '../lib/useRead';
import { isAdmin, type SessionUser } from '../lib/tokens';
import { Alert, Page } from '../ui';

export function healthWord(h: Schemas['AdminHealth'] | undefined): 'healthy' | 'warning' | 'critical' {
  if (!h || !h.database.ok) return 'critical';
  const failed = h.jobs.queues.some((q) => q.failed > 0);
  return h.status === 'ok' && !failed && h.database.migrations.pending === 0 ? 'healthy' : 'warning';
}

export default function Dashboard({ user, admin = isAdmin(user) }: { user: SessionUser; admin?: boolean }) {
  const profile = useRead('profile', () => api.GET('/api/user/profile')).data;
  // The observers whose country dashboard the caller may see: every one for an admin, an owner's
  // own otherwise.
  const observers = useRead('observers', () => api.GET('/api/observer/observers')).data?.observers ?? [];
  // The service's figures are the admins'.
  const healthRead = useRead(admin ? 'admin-health' : null, () => api.GET('/api/admin/health'));
  const statsRead = useRead(admin ? 'admin-stats' : null, () => api.GET('/api/admin/stats'));
  const instancesRead = useRead(admin ? 'admin-instances' : null, () => api.GET('/api/admin/instances'));
  const health = healthRead.data;
  const stats = statsRead.data;
  const instances = instancesRead.data?.instances ?? [];

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
              <Alert message={healthRead.error} />
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
              <Alert message={statsRead.error} />
              <p>Conversations: {stats?.conversations ?? '…'}</p>
              <p>
                Messages: {stats?.messages.total ?? '…'} ({stats?.messages.failed ?? 0} failed)
              </p>
              <p>Timeline events: {stats?.timelineEvents.total ?? '…'}</p>
            </div>
            <div className="card">
              <h2>Instances</h2>
              <Alert message={instancesRead.error} />
              <Table rows={[...byLevel, ...bySource]} label="Instances by level and source" />
            </div>
            <div className="card wide">
              <h2>Users by kind</h2>
              <BarChart rows={users} label="Users by role and account type" />
            </div>
          </>
        )}
      </div>
      <Country observers={observers} admin={admin} />
    </Page>
  );
}

const pct = (x: number) => `${Math.round(x * 100)} %`;
const entries = (o: Record<string, number>, prefix = '') =>
  Object.entries(o)
    .sort(([, a], [, b]) => b - a)
    .map(([k, v]) => [`${prefix}${k}`, v] as const);

/** One observer's country dashboard and diary compliance (contract: ground floor). */
function Country({ observers, admin }: { observers: Schemas['Instance'][]; admin: boolean }) {
  const [observerId, setObserverId] = useState<number | null>(null);
  const id = observerId ?? observers[0]?.id ?? null;
  const path = { params: { path: { observerId: id! } } };
  // Another observer's figures are never shown under this one's name.
  const boardRead = useRead(id === null ? null : `country:${id}`, () =>
    api.GET('/api/subject-consciousness/dashboard/{observerId}', path),
  );
  const board = boardRead.data;
  const compliance = useRead(id === null ? null : `compliance:${id}`, () =>
    api.GET('/api/subject-consciousness/compliance/{observerId}', path),
  ).data;

  // A persona is a character: its name, not its id (the characters' list is the admins'; others
  // see the id).
  const characters = useRead(admin ? 'characters' : null, () => api.GET('/api/admin/data/npcs')).data;
  const personas = new Map((characters?.npcs ?? []).map((n) => [String(n.id), n.name]));
  const personaRows = (byPersona: Record<string, number>) =>
    entries(byPersona).map(
      ([k, v]) => [`Persona: ${k === 'none' ? 'none' : (personas.get(k) ?? `#${k}`)}`, v] as const,
    );

  if (id === null) return null;
  const status = board?.health.status;
  const word = status ? status.charAt(0).toUpperCase() + status.slice(1) : '…';
  return (
    <section aria-labelledby="country-title" className="country">
      <div className="row wrap heading-row">
        <h2 id="country-title" className="grow">
          Country dashboard
        </h2>
        {observers.length > 1 && (
          <label>
            Observer
            <select value={id} onChange={(e) => setObserverId(Number(e.target.value))}>
              {observers.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name} (#{o.id})
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      <Alert message={boardRead.error} />
      <div className="grid">
        <div className="card">
          <h3>Country health</h3>
          <p>
            Health: <strong className={`health ${status ?? ''}`}>{word}</strong>
          </p>
          {board && (
            <p className="muted small">
              {pct(board.health.inactiveRatio)} of instances inactive · {pct(board.health.missingDiaryRatio)}{' '}
              of active ones without a diary
            </p>
          )}
        </div>
        <div className="card">
          <h3>Diary compliance ({board?.diaryCompliance.windowHours ?? 24} h)</h3>
          <p>
            {board ? (
              board.diaryCompliance.compliant ? (
                <strong className="health healthy">Compliant</strong>
              ) : (
                <strong className="health critical">Not compliant</strong>
              )
            ) : (
              '…'
            )}
          </p>
          <p className="small">Missing diaries: {board?.diaryCompliance.missingCount ?? '…'}</p>
        </div>
        <div className="card">
          <h3>Projects</h3>
          <p>
            Total: <strong>{board?.projects.total ?? '…'}</strong>
          </p>
          <p className="small">
            Completed: {board?.projects.completed ?? '…'} · In progress: {board?.projects.inProgress ?? '…'}
          </p>
          {board && Object.keys(board.projects.byState).length > 0 && (
            <Table rows={entries(board.projects.byState)} label="Projects by state" />
          )}
        </div>
        <div className="card">
          <h3>Observed activity (24 h)</h3>
          <p>Events: {board?.activity24h.events ?? '…'}</p>
          <p className="small">
            Active instances: {board?.activity24h.activeInstances ?? '…'} of {board?.instances.total ?? '…'}
          </p>
        </div>
        {board && (
          <div className="card wide">
            <h3>Instances by persona, level and source</h3>
            <BarChart
              rows={[
                ...personaRows(board.instances.byPersona),
                ...entries(board.instances.byLevel, 'Level '),
                ...entries(board.instances.bySource, 'Source: '),
              ]}
              label="Observed instances by persona, level and source"
            />
          </div>
        )}
        {compliance && compliance.instances.length > 0 && (
          <div className="card wide">
            <h3>Diaries per instance</h3>
            <table tabIndex={0} aria-label="Diaries per instance">
              <thead>
                <tr>
                  <th scope="col">Instance</th>
                  <th scope="col">Source</th>
                  <th scope="col">Diary</th>
                  <th scope="col">Entries</th>
                  <th scope="col">Last entry</th>
                </tr>
              </thead>
              <tbody>
                {compliance.instances.map((i) => (
                  <tr key={i.instanceId}>
                    <td>{i.name}</td>
                    <td>{i.source}</td>
                    <td>{i.hasDiary ? 'written' : 'missing'}</td>
                    <td>{i.entries}</td>
                    <td>{i.lastDiaryAt ? new Date(i.lastDiaryAt).toLocaleString() : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {board?.awareness && (
          <div className="card wide">
            <h3>Latest awareness</h3>
            <p>{board.awareness.summary}</p>
          </div>
        )}
      </div>
    </section>
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
