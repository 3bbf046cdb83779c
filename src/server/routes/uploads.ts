import { errors } from '../../errors.js';
import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import { saveUpload } from '../../services/uploads.js';

/** POST /upload-file: a targets file (one per line) streamed to the uploads folder. */
export const registerUploadRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/upload-file', summary: 'Upload a file (e.g. targets, one per line); its path is usable as target_file', tags: ['uploads'], sideEffects: 'writes',
    bodyKind: 'multipart',
    responses: { 200: { description: 'Stored; path usable as target_file' }, 400: { description: 'No file provided' }, 413: { description: 'Over server.max_upload_mb' } },
    handler: async ({ req }) => {
      if (!req.isMultipart()) throw errors.noFileProvided();
      // Read live so a settings reload applies to the next upload.
      const limitBytes = Math.max(1, Number((app.settings().settings.server as { max_upload_mb?: number }).max_upload_mb ?? 512)) * 1024 * 1024;
      for await (const part of req.parts({ limits: { fileSize: limitBytes } })) {
        if (part.type !== 'file') continue;
        if (part.fieldname !== 'file') {
          part.file.resume();
          continue;
        }
        const saved = await saveUpload(app, { filename: part.filename, stream: part.file, limitBytes });
        return { message: 'File uploaded', ...saved };
      }
      throw errors.noFileProvided();
    },
  });
};
