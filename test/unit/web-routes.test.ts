/**
 * Every client-side route of the dashboard is one the daemon answers with the app (a reload of
 * any page must show the page, not a 401/404), and the navigation names are the ones people expect.
 */
import { describe, expect, it } from 'vitest';
import { NAV, ROUTES } from '../../web/src/routes.js';
import { DASHBOARD_PAGES } from '../../src/server/plugins/ui.js';

describe('dashboard routes', () => {
  it('start with a page the daemon serves', () => {
    for (const route of ROUTES) {
      const first = route.split('/')[1] ?? '';
      if (first === '') continue;
      expect(DASHBOARD_PAGES as readonly string[], route).toContain(first);
    }
  });

  it('name the navigation as the issue asks', () => {
    expect(NAV.map((n) => n.label)).toEqual(['Overview', 'Runs', 'Workflows', 'Workspaces', 'Assets', 'Vulnerabilities', 'Schedules', 'Events', 'Workers', 'Settings']);
  });
});
