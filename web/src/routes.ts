/**
 * The dashboard's pages. The first path segment of each must be one of the daemon's dashboard
 * routes (DASHBOARD_PAGES in src/server/plugins/ui.ts), or a reload of that page would answer
 * 401/404 instead of the app (test/unit/web-routes.test.ts checks it).
 */
export const NAV = [
  { path: '/overview', label: 'Overview' },
  { path: '/runs', label: 'Runs' },
  { path: '/workflows', label: 'Workflows' },
  { path: '/workspaces', label: 'Workspaces' },
  { path: '/assets', label: 'Assets' },
  { path: '/vulnerabilities', label: 'Vulnerabilities' },
  { path: '/schedules', label: 'Schedules' },
  { path: '/events', label: 'Events' },
  { path: '/workers', label: 'Workers' },
  { path: '/settings', label: 'Settings' },
] as const;

/** Every route pattern, in matching order. */
export const ROUTES = [
  '/',
  '/login',
  '/overview',
  '/runs',
  '/runs/new',
  '/runs/:id',
  '/workflows',
  '/workflows/:name',
  '/workspaces',
  '/workspaces/:name',
  '/assets',
  '/vulnerabilities',
  '/vulnerabilities/:id',
  '/schedules',
  '/events',
  '/workers',
  '/settings',
] as const;
