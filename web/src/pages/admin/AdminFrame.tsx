// The admin zone's frame: the section's title and the navigation between the sections, both from
// the route table (routes.ts).
import type { ReactNode } from 'react';
import { ADMIN_SECTIONS } from '../../routes';
import { Link, Page } from '../../ui';

export function AdminFrame({ path, children }: { path: string; children: ReactNode }) {
  const section = ADMIN_SECTIONS.find((s) => s.path === path) ?? ADMIN_SECTIONS[0];
  return (
    <Page title={section?.title ?? 'Admin'}>
      <nav aria-label="Admin sections" className="subnav">
        {ADMIN_SECTIONS.map((s) => (
          <Link key={s.path} to={s.path} current={s.path === section?.path}>
            {s.link}
          </Link>
        ))}
      </nav>
      {children}
    </Page>
  );
}
