/** The frame of every page: navigation (a drawer on phones), who is logged in, log out. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { logout, type Me } from '../lib/auth.js';
import { NAV } from '../routes.js';

export function Layout({ me, path, children }: { me: Me; path: string; children: ComponentChildren }) {
  const [open, setOpen] = useState(false);
  const current = (p: string) => path === p || path.startsWith(`${p}/`) || (p === '/overview' && path === '/');
  return (
    <div class={`shell${open ? ' nav-open' : ''}`}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <button type="button" class="btn icon nav-toggle" aria-expanded={open} aria-controls="nav" onClick={() => setOpen(!open)}>
          <span aria-hidden="true">☰</span>
          <span class="sr-only">Menu</span>
        </button>
        <a class="brand" href="/overview">
          osm
        </a>
        <span class="spacer" />
        <span class="who" title={`${me.kind} credential`}>
          {me.name} <span class="role">{me.role}</span>
        </span>
        {me.kind !== 'no-auth' && (
          <button type="button" class="btn small" onClick={() => void logout()}>
            Log out
          </button>
        )}
      </header>
      <nav id="nav" class="sidenav" aria-label="Main" onClick={() => setOpen(false)}>
        <ul>
          {NAV.map((n) => (
            <li>
              <a href={n.path} aria-current={current(n.path) ? 'page' : undefined}>
                {n.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

/** A page heading with optional actions on the right. */
export function PageHead({ title, children }: { title: ComponentChildren; children?: ComponentChildren }) {
  return (
    <div class="page-head">
      <h1>{title}</h1>
      {children && <div class="page-actions">{children}</div>}
    </div>
  );
}
