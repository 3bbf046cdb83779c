import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { errors } from '../../errors.js';
import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import {
  deleteSnapshot,
  exportSnapshot,
  importSnapshot,
  listSnapshots,
  maxSnapshotBytes,
  snapshotFile,
  streamSnapshot,
  type ImportInput,
} from '../../services/snapshots.js';

const TRUE = ['true', '1', 'yes', 'on'];
/** A boolean form field or JSON value ("true", 1, true …). */
const flag = (v: unknown) => v === true || v === 1 || (typeof v === 'string' && TRUE.includes(v.trim().toLowerCase()));

const exportBody = z.object({
  workspace: z.string().optional(),
  include_artifacts: z.union([z.boolean(), z.string()]).optional(),
});

const importJson = z.object({
  source: z.string().optional(),
  url: z.string().optional(),
  force: z.union([z.boolean(), z.string(), z.number()]).optional(),
  skip_db: z.union([z.boolean(), z.string(), z.number()]).optional(),
});

/** Snapshots: list, export (stored then sent), download, delete, import (multipart or JSON), legacy download. */
export const registerSnapshotRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/snapshots', summary: 'Stored snapshot zips, newest first', tags: ['snapshots'], sideEffects: 'none',
    handler: ({ scope }) => listSnapshots(app, scope),
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/snapshots/export', summary: 'Export a workspace (folder + database rows) as a zip, stored and sent', tags: ['snapshots'], sideEffects: 'writes',
    body: exportBody,
    responses: { 200: { description: 'application/zip' }, 400: { description: 'Workspace name is required' }, 404: { description: 'Workspace not found: <workspace>' } },
    handler: async ({ body, reply, scope }) => {
      const includeArtifacts = body.include_artifacts === undefined ? true : flag(body.include_artifacts);
      const r = await exportSnapshot(app, { workspace: body.workspace, includeArtifacts }, scope);
      reply
        .header('Content-Disposition', `attachment; filename=${r.name}`)
        .header('Content-Type', 'application/zip')
        .header('X-Snapshot-Size', String(r.size));
      return reply.send(createReadStream(r.path));
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/snapshots/download/:name', summary: 'Download a stored snapshot', tags: ['snapshots'], sideEffects: 'none',
    params: z.object({ name: z.string() }),
    handler: async ({ params, reply, scope }) => {
      const f = await snapshotFile(app, params.name, scope);
      reply.header('Content-Disposition', `attachment; filename=${f.name}`).header('Content-Type', 'application/zip').header('Content-Length', String(f.size));
      return reply.send(createReadStream(f.path));
    },
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/snapshot-download/:workspace', summary: 'Legacy: a fresh export of the workspace, streamed (not stored)', tags: ['snapshots'], sideEffects: 'none',
    params: z.object({ workspace: z.string() }),
    handler: async ({ params, reply, scope }) => {
      const s = await streamSnapshot(app, params.workspace, scope);
      reply.header('Content-Disposition', `attachment; filename=${s.name}`).header('Content-Type', 'application/zip');
      return reply.send(s.stream);
    },
  });

  defineRoute(server, app, {
    method: 'DELETE', url: '/osm/api/snapshots/:name', summary: 'Delete a stored snapshot', tags: ['snapshots'], sideEffects: 'writes',
    params: z.object({ name: z.string() }),
    handler: ({ params, scope }) => deleteSnapshot(app, params.name, scope),
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/snapshots/import', summary: 'Import a snapshot zip (multipart file or url; or JSON { source | url })', tags: ['snapshots'], sideEffects: 'writes',
    bodyKind: 'multipart',
    responses: { 200: { description: 'Imported' }, 400: { description: 'Either file or url is required / unsafe archive' }, 500: { description: 'Failed to import snapshot: …' } },
    handler: async ({ req }) => {
      if (!req.isMultipart()) {
        const body = req.body === undefined || req.body === null ? {} : req.body;
        const r = importJson.safeParse(body);
        if (!r.success) throw errors.invalidBody();
        return importSnapshot(app, { url: r.data.url ?? r.data.source, force: flag(r.data.force), skipDb: flag(r.data.skip_db) });
      }
      const maxBytes = maxSnapshotBytes(app);
      const tmp = mkdtempSync(join(tmpdir(), 'osm-upload-'));
      try {
        const input: ImportInput = {};
        for await (const part of req.parts({ limits: { fileSize: maxBytes } })) {
          if (part.type === 'file') {
            if (part.fieldname !== 'file' || input.file) {
              part.file.resume();
              continue;
            }
            const path = join(tmp, 'upload.zip');
            await pipeline(part.file, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
            if (part.file.truncated) throw errors.uploadTooLarge(Math.round(maxBytes / 1024 / 1024));
            input.file = { path, name: part.filename };
          } else if (part.fieldname === 'url' || part.fieldname === 'source') {
            input.url = String(part.value ?? '');
          } else if (part.fieldname === 'force') {
            input.force = flag(part.value);
          } else if (part.fieldname === 'skip_db') {
            input.skipDb = flag(part.value);
          }
        }
        return await importSnapshot(app, input);
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    },
  });
};
