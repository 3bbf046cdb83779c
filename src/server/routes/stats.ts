import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { systemStats } from '../../services/stats.js';

/** GET /stats: system statistics (not wrapped in `data`, as the spec shows). */
export const registerStatsRoutes: RegisterRoutes = (server, deps) => {
  defineRoute(server, deps.app, {
    method: 'GET', url: '/osm/api/stats', summary: 'System statistics', tags: ['stats'], sideEffects: 'none',
    handler: ({ scope }) => systemStats(deps.app, scope),
  });
};
