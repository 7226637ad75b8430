// Shared bits of UI: links that route, alerts, the page frame.
import type { MouseEvent, ReactNode } from 'react';
import { navigate } from './lib/router';

export function Link({ to, children, current }: { to: string; children: ReactNode; current?: boolean }) {
  const onClick = (e: MouseEvent) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} onClick={onClick} aria-current={current ? 'page' : undefined}>
      {children}
    </a>
  );
}

export function Alert({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <p role="alert" className="alert">
      {message}
    </p>
  );
}

/** The end of an editing form: its error, if any, then its submit button and Cancel. */
export function FormEnd({
  error,
  submit,
  onCancel,
}: {
  error: string | null;
  submit: string;
  onCancel: () => void;
}) {
  return (
    <>
      <Alert message={error} />
      <div className="row">
        <button type="submit">{submit}</button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}

export function Page({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="page" aria-labelledby="page-title">
      <h1 id="page-title">{title}</h1>
      {children}
    </section>
  );
}
