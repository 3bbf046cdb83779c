import { z } from 'zod';
import { errors } from '../../errors.js';
import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { readRedactedSettings, reloadSettings, replaceSettings, settingsStatus } from '../../services/settings.js';

const YAML_TYPES = new Set(['text/yaml', 'application/yaml', 'application/x-yaml', 'text/plain']);

/** GET/PUT /settings/yaml, POST /settings/reload, GET /settings/status. */
export const registerSettingsRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  for (const url of ['/osm/api/settings/yaml', '/osm/api/settings/yaml/']) {
    defineRoute(server, app, {
      method: 'GET', url, summary: 'The settings file, secrets replaced by [REDACTED]', tags: ['settings'], sideEffects: 'none',
      responses: { 200: { description: 'YAML text (text/yaml)' } },
      handler: ({ reply }) => {
        const text = readRedactedSettings(app);
        return reply.type('text/yaml; charset=utf-8').send(text);
      },
    });
  }
  defineRoute(server, app, {
    method: 'PUT', url: '/osm/api/settings/yaml', summary: 'Replace the settings file (validated, backed up, reloaded); [REDACTED] values keep the current secret', tags: ['settings'], sideEffects: 'writes',
    bodyKind: 'text',
    responses: {
      200: { description: 'Updated', schema: z.object({ message: z.string(), path: z.string(), backup: z.string() }) },
      400: { description: 'Invalid YAML configuration: <detail>' },
      415: { description: 'Body is not YAML text' },
    },
    handler: ({ req }) => {
      const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (!YAML_TYPES.has(type)) throw errors.unsupportedMedia(type || '(none)');
      return replaceSettings(app, typeof req.body === 'string' ? req.body : '');
    },
  });
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/settings/reload', summary: 'Re-read the settings file now (a bad file keeps the old settings)', tags: ['settings'], sideEffects: 'writes',
    responses: {
      200: { description: 'Reloaded', schema: z.object({ message: z.string(), path: z.string(), version: z.number() }) },
      500: { description: 'Failed to reload configuration: <detail>' },
    },
    handler: () => reloadSettings(app),
  });
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/settings/status', summary: 'Hot-reload status', tags: ['settings'], sideEffects: 'none',
    responses: { 200: { description: 'Status', schema: z.object({ path: z.string(), last_reload: z.string(), is_watching: z.boolean(), error: z.string(), version: z.number() }) } },
    handler: () => settingsStatus(app),
  });
};
