import { z } from 'zod';
import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { clearTable, listTables } from '../../services/database.js';

/** GET /database/tables and POST /database/tables/{table}/clear (force required). */
export const registerDatabaseRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/database/tables', summary: 'Row counts of the clearable tables', tags: ['database'], sideEffects: 'none',
    responses: { 200: { description: '{ data: [{ name, row_count }], valid_tables }' } },
    handler: () => listTables(app),
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/database/tables/:table/clear', summary: 'Delete every row of one table (body {"force": true})', tags: ['database'], sideEffects: 'writes',
    params: z.object({ table: z.string() }),
    body: z.looseObject({ force: z.boolean().nullable().optional() }),
    bodyError: 'Invalid request body',
    responses: {
      200: { description: '{ message: "Table cleared successfully", table }' },
      400: { description: 'Invalid request body | destructive operation without force (with valid_tables) | unknown table (with valid_tables)' },
      409: { description: 'Runs are running or queued (runs, step_results); assets or vulnerabilities remain (workspaces)' },
    },
    handler: ({ params, body }) => clearTable(app, params.table, body.force ?? undefined),
  });
};
