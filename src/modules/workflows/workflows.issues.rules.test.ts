import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { issueAttemptResult, issueText, type IssueSubject } from './workflows.issues.rules.js';

const links = { publicUrl: 'https://api.example.org', appUrl: 'https://app.example.org' };
const subject = (over: Partial<IssueSubject> = {}): IssueSubject => ({
  instanceId: '5f0c6d1e-8a9b-4c3d-9e2f-1a2b3c4d5e6f',
  machineId: 'documentation_flow_v1',
  title: 'Harbour guide',
  state: 'integration',
  stateVisit: 4,
  artifacts: [
    { id: 'a1', summary: 'Outline', reviewStatus: 'approved' },
    { id: 'a2', summary: '', reviewStatus: 'pending' },
  ],
  ...over,
});

describe('issueText', () => {
  it('names the workflow, its state and each artifact with its link', () => {
    expect(issueText(subject(), links)).toEqual({
      title: 'Artifacts of workflow "Harbour guide" at integration (2)',
      body: [
        'Workflow instance `5f0c6d1e-8a9b-4c3d-9e2f-1a2b3c4d5e6f` (`documentation_flow_v1`) entered `integration` (visit 4) and collected 2 artifact(s).',
        '',
        '- Outline (review: approved): https://api.example.org/api/protocol/artifacts/a1',
        '- (no summary) (review: pending): https://api.example.org/api/protocol/artifacts/a2',
        '',
        'Instance: https://api.example.org/api/protocol/instances/5f0c6d1e-8a9b-4c3d-9e2f-1a2b3c4d5e6f',
        'Console: https://app.example.org/workflows',
      ].join('\n'),
    });
  });

  it.each([
    [
      'no title: the instance id',
      { title: null },
      /^Artifacts of workflow 5f0c6d1e-[\w-]+ at integration \(2\)$/,
    ],
    [
      'a long title is cut',
      { title: 'x'.repeat(500) },
      /^Artifacts of workflow "x{199}…" at integration \(2\)$/,
    ],
    ['a mention is no mention', { title: 'ask @octocat' }, /^Artifacts of workflow "ask @\u200boctocat"/],
  ])('title: %s', (_, over, expected) => {
    expect(issueText(subject(over), links).title).toMatch(expected);
  });

  it('keeps each summary on one line, and lists at most 100 artifacts', () => {
    const artifacts = Array.from({ length: 103 }, (_, i) => ({
      id: `a${i}`,
      summary: `line one\nline two of ${i}`,
      reviewStatus: 'pending',
    }));
    const { body } = issueText(subject({ artifacts }), links);
    expect(body).toContain('- line one line two of 0 (review: pending)');
    expect(body.split('\n').filter((l) => l.startsWith('- line one'))).toHaveLength(100);
    expect(body).toContain('- … and 3 more');
    expect(issueText(subject({ artifacts: [] }), links).body).toContain('(no artifacts)');
  });
});

describe('issueAttemptResult', () => {
  it.each([
    [{ kind: 'created' }, false, 'created'],
    [{ kind: 'created' }, true, 'created'],
    [{ kind: 'failed', retryable: true }, false, 'retry'],
    [{ kind: 'failed', retryable: true }, true, 'failed'],
    [{ kind: 'failed', retryable: false }, false, 'failed'],
  ] as const)('%j, final %s → %s', (outcome, final, expected) => {
    expect(issueAttemptResult(outcome, final)).toBe(expected);
  });
});

describe('configuration', () => {
  it('is unset by default, and takes a token, a repository and an API URL', () => {
    expect(loadConfig({}).tracker).toBeUndefined();
    expect(
      loadConfig({
        ISSUE_TRACKER_TOKEN: 'ghp_x',
        ISSUE_TRACKER_REPO: 'acme/harbour',
        ISSUE_TRACKER_API_URL: 'https://ghe.example.org/api/v3/',
      }).tracker,
    ).toEqual({
      token: 'ghp_x',
      repo: 'acme/harbour',
      apiUrl: 'https://ghe.example.org/api/v3',
      maxAttempts: 8,
      retryDelaySeconds: 10,
    });
    expect(loadConfig({ ISSUE_TRACKER_TOKEN: 'ghp_x', ISSUE_TRACKER_REPO: 'a/b' }).tracker?.apiUrl).toBe(
      'https://api.github.com',
    );
  });

  it('needs the token and the repository together, and never echoes the token', () => {
    expect(() => loadConfig({ ISSUE_TRACKER_REPO: 'acme/harbour' })).toThrow(/ISSUE_TRACKER_TOKEN \(unset\)/);
    let message = '';
    try {
      loadConfig({ ISSUE_TRACKER_TOKEN: 'ghp_secret_value' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/ISSUE_TRACKER_REPO \(unset\): .*go together/);
    expect(message).not.toContain('ghp_secret_value');
    expect(() => loadConfig({ ISSUE_TRACKER_TOKEN: 'x', ISSUE_TRACKER_REPO: 'no-slash' })).toThrow(
      /ISSUE_TRACKER_REPO="no-slash"/,
    );
  });
});
