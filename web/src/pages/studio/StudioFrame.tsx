// The character studio's frame: the page's title and the navigation between the studio's pages,
// both from the route table (routes.ts). The chosen character (`?character=<id>`) goes along from
// page to page, so "Try it" opens on the character just edited.
import type { ReactNode } from 'react';
import { useQueryParam } from '../../lib/router';
import { STUDIO_SECTIONS } from '../../routes';
import { Link, Page } from '../../ui';
import './studio.css';

export function StudioFrame({ path, children }: { path: string; children: ReactNode }) {
  const section = STUDIO_SECTIONS.find((s) => s.path === path) ?? STUDIO_SECTIONS[0];
  const [character] = useQueryParam('character');
  const keep = character ? `?character=${encodeURIComponent(character)}` : '';
  return (
    <Page title={section?.title ?? 'Studio'}>
      <nav aria-label="Studio" className="subnav">
        {STUDIO_SECTIONS.map((s) => (
          <Link key={s.path} to={`${s.path}${keep}`} current={s.path === section?.path}>
            {s.link}
          </Link>
        ))}
      </nav>
      {children}
    </Page>
  );
}
