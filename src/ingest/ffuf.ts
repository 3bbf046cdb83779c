/**
 * ffuf JSON (`-of json -o out.json`) → assets: each entry of `results` (url, status, length,
 * words, lines, content-type, redirectlocation) is a URL asset of its host. The document is
 * streamed (@streamparser/json), so a large result list is never held in memory.
 */
import type { ToolImporter } from './tool-import.js';
import { urlAsset } from './web-rows.js';
import { jsonPaths } from './readers.js';
import { str } from './records.js';

export const ffufImporter: ToolImporter = {
  name: 'ffuf',
  input: 'JSON (ffuf -of json -o out.json)',
  maps: 'result → URL asset (status, length, words, lines, content type; redirect in remarks)',
  reader: jsonPaths(['$.results.*']),
  rows(record, raw, opts) {
    const redirect = str(record.redirectlocation);
    return [
      {
        kind: 'asset',
        row: urlAsset(str(record.url), {
          status_code: Number(record.status) || 0,
          content_length: Number(record.length) || 0,
          words: Number(record.words) || 0,
          lines: Number(record.lines) || 0,
          content_type: str(record['content-type']),
          remarks: redirect ? `redirect: ${redirect}` : '',
          input: str((record.input as Record<string, unknown> | undefined)?.FUZZ),
          method: 'GET',
          source: opts.source,
          raw_json_data: raw,
        }),
      },
    ];
  },
};
