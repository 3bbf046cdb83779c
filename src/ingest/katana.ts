/**
 * katana JSON lines (`katana -jsonl -o crawl.jsonl`) → assets: each crawled endpoint
 * (`request.endpoint`, or `endpoint`/`url` of older versions) is a URL asset of its host with the
 * response's status, length, content type and technologies when katana recorded a response. The
 * response body is not stored (raw_json_data keeps the record without it).
 */
import type { ToolImporter } from './tool-import.js';
import { urlAsset } from './web-rows.js';
import { jsonLines } from './readers.js';
import { asObject, str } from './records.js';

function header(headers: Record<string, unknown> | undefined, name: string): string {
  if (!headers) return '';
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase().replace(/_/g, '-') === name) return str(v);
  return '';
}

export const katanaImporter: ToolImporter = {
  name: 'katana',
  input: 'JSON lines (katana -jsonl -o crawl.jsonl)',
  maps: 'endpoint → URL asset (method, status, length, content type, technologies)',
  reader: jsonLines(),
  rows(record, _raw, opts) {
    const req = asObject(record.request) ?? {};
    const res = asObject(record.response);
    const url = str(req.endpoint) || str(record.endpoint) || str(record.url);
    const headers = asObject(res?.headers);
    const slim = { ...record, response: res ? { ...res, body: undefined, raw: undefined } : undefined };
    return [
      {
        kind: 'asset',
        row: urlAsset(url, {
          method: str(req.method) || 'GET',
          status_code: Number(res?.status_code) || 0,
          content_length: Number(res?.content_length) || 0,
          content_type: header(headers, 'content-type'),
          tech: Array.isArray(res?.technologies) ? res.technologies.map(str).filter(Boolean) : [],
          source: opts.source,
          raw_json_data: JSON.stringify(slim),
        }),
      },
    ];
  },
};
