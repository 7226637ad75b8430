import { describe, expect, it } from 'vitest';
import {
  ADMIN_SECTIONS,
  CONSOLE_PATHS,
  currentLink,
  HOME,
  HOME_ALIASES,
  mainLinks,
  ROUTES,
  routeOf,
  STUDIO_SECTIONS,
} from './routes';

describe('the route table', () => {
  it('gives every route one distinct path and the server every path', () => {
    const paths = ROUTES.map((r) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
    expect(CONSOLE_PATHS).toEqual([...HOME_ALIASES, ...paths]);
  });

  it('puts every page a person opens in a navigation: the main one or the admin sections', () => {
    const reachable = new Set([
      ...mainLinks(true).map((l) => l.path),
      ...ADMIN_SECTIONS.map((s) => s.path),
      ...STUDIO_SECTIONS.map((s) => s.path),
    ]);
    for (const r of ROUTES)
      if (r.access !== 'anyone') expect(reachable.has(r.path), `${r.path} in a navigation`).toBe(true);
    // The admin sections are reached from the main navigation's "Admin".
    expect(mainLinks(true).map((l) => l.path)).toContain(ADMIN_SECTIONS[0]?.path);
    // And the studio's pages from its "Studio", an admin's link.
    expect(mainLinks(true).map((l) => l.path)).toContain(STUDIO_SECTIONS[0]?.path);
    expect(ROUTES.filter((r) => 'studio' in r).every((r) => r.access === 'admin')).toBe(true);
  });

  it('shows the admin link to admins only', () => {
    const admin = mainLinks(true).map((l) => l.label);
    const others = mainLinks(false).map((l) => l.label);
    expect(admin).toEqual(['Chat', 'Memory', 'Observer', 'Workflows', 'Dashboard', 'Studio', 'Admin']);
    expect(others).toEqual(['Chat', 'Memory', 'Observer', 'Workflows', 'Dashboard']);
  });

  it('routes a path to its page, the aliases and unknown paths home', () => {
    expect(routeOf('/workflows').page).toBe('workflows');
    expect(routeOf('/admin/audit-log').page).toBe('audit-log');
    for (const p of [...HOME_ALIASES, '/nowhere']) expect(routeOf(p)).toBe(HOME);
  });

  it('marks the current link: its own, its area’s for an admin section, none off the navigation', () => {
    expect(currentLink('/memory')).toBe('/memory');
    expect(currentLink('/')).toBe('/chat');
    expect(currentLink('/signin')).toBe('/chat');
    expect(currentLink('/admin/scheduled-tasks')).toBe('/admin');
    expect(currentLink('/studio/try')).toBe('/studio');
    expect(currentLink('/studio')).toBe('/studio');
    expect(currentLink('/verify-email')).toBeNull();
    expect(currentLink('/nowhere')).toBeNull();
  });
});
