/** The app: who is logged in decides between the login page and the pages; the path decides the page. */
import { useEffect } from 'preact/hooks';
import { refreshMe, useAuth } from './lib/auth.js';
import { match, navigate, useLocation } from './lib/router.js';
import { Layout } from './components/layout.js';
import { ErrorBox, Loading } from './components/states.js';
import { LoginPage } from './pages/login.js';
import { OverviewPage } from './pages/overview.js';
import { RunsPage } from './pages/runs.js';
import { NewRunPage } from './pages/run-new.js';
import { RunPage } from './pages/run-detail.js';
import { WorkflowsPage } from './pages/workflows.js';
import { WorkflowPage } from './pages/workflow-detail.js';
import { WorkspacesPage } from './pages/workspaces.js';
import { WorkspacePage } from './pages/workspace-detail.js';
import { AssetsPage } from './pages/assets.js';
import { VulnsPage } from './pages/vulns.js';
import { VulnPage } from './pages/vuln-detail.js';
import { SchedulesPage } from './pages/schedules.js';
import { EventsPage } from './pages/events.js';
import { WorkersPage } from './pages/workers.js';
import { SettingsPage } from './pages/settings.js';
import type { JSX } from 'preact';

type Page = (params: Record<string, string>) => JSX.Element;

const PAGES: [string, Page][] = [
  ['/', () => <OverviewPage />],
  ['/overview', () => <OverviewPage />],
  ['/runs', () => <RunsPage />],
  ['/runs/new', () => <NewRunPage />],
  ['/runs/:id', (p) => <RunPage id={p.id!} />],
  ['/workflows', () => <WorkflowsPage />],
  ['/workflows/:name', (p) => <WorkflowPage name={p.name!} />],
  ['/workspaces', () => <WorkspacesPage />],
  ['/workspaces/:name', (p) => <WorkspacePage name={p.name!} />],
  ['/assets', () => <AssetsPage />],
  ['/vulnerabilities', () => <VulnsPage />],
  ['/vulnerabilities/:id', (p) => <VulnPage id={p.id!} />],
  ['/schedules', () => <SchedulesPage />],
  ['/events', () => <EventsPage />],
  ['/workers', () => <WorkersPage />],
  ['/settings', () => <SettingsPage />],
];

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <a href="/overview">Go to the overview</a>.
      </p>
    </section>
  );
}

export function App() {
  const auth = useAuth();
  const { path } = useLocation();
  useEffect(() => void refreshMe(), []);

  // After logging in, leave the login page for where the user was going.
  useEffect(() => {
    if (auth.status === 'in' && path === '/login') {
      const next = new URLSearchParams(location.search).get('next');
      navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/overview', { replace: true });
    }
  }, [auth.status, path]);

  useEffect(() => {
    const title = path.split('/')[1] || 'overview';
    document.title = `${title.charAt(0).toUpperCase()}${title.slice(1)} · osm`;
  }, [path]);

  if (auth.status === 'checking') return <Loading what="Connecting" />;
  if (auth.status === 'offline') return <ErrorBox error={new Error(auth.message)} retry={() => void refreshMe()} />;
  if (auth.status === 'anonymous') return <LoginPage reason={auth.reason} />;
  if (path === '/login') return <Loading what="Opening" />;
  let page: JSX.Element = <NotFound />;
  for (const [pattern, render] of PAGES) {
    const params = match(pattern, path);
    if (params) {
      page = render(params);
      break;
    }
  }
  return (
    <Layout me={auth.me} path={path}>
      {page}
    </Layout>
  );
}
