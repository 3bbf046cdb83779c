/**
 * gobuster dir-mode output (`gobuster dir -o out.txt`) → assets, one URL asset per result line:
 * `/admin (Status: 200) [Size: 71]`, `[--> /login/]` for redirects, `-n` lines without a status,
 * and `-e` lines with full URLs. Without `-e` the lines hold paths only: the base URL comes from
 * the import (`--base-url`, or the function's argument); a path line without one is rejected.
 */
import type { ToolImporter } from './tool-import.js';
import { urlAsset } from './web-rows.js';
import { textLines } from './readers.js';
import { reject, str } from './records.js';

const LINE = /^(\S+)\s*(?:\(Status:\s*(\d{3})\))?\s*(?:\[Size:\s*(\d+)\])?\s*(?:\[-->\s*([^\]]*)\])?\s*$/;

function join(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

export const gobusterImporter: ToolImporter = {
  name: 'gobuster',
  input: 'text (gobuster dir -o out.txt; -e for full URLs, else --base-url)',
  maps: 'result line → URL asset (status, size; redirect in remarks)',
  reader: textLines(),
  rows(record, raw, opts) {
    // The progress and banner lines gobuster prints to a terminal are not results.
    const line = str(record.line).replace(/\u001b\[[0-9;]*[A-Za-z]/g, '').trim();
    if (line === '' || line.startsWith('=') || line.startsWith('[') || line.startsWith('Progress:')) return [];
    const m = LINE.exec(line);
    if (!m) return [{ kind: 'asset', row: reject('not a gobuster dir result line') }];
    const [, target, status, size, redirect] = m;
    let url = target!;
    if (!/^https?:\/\//i.test(url)) {
      if (!url.startsWith('/')) return [{ kind: 'asset', row: reject('not a gobuster dir result line') }];
      if (!opts.baseUrl) return [{ kind: 'asset', row: reject('a path without a base URL: pass the base URL (--base-url) or run gobuster with -e') }];
      url = join(opts.baseUrl, url);
    }
    return [
      {
        kind: 'asset',
        row: urlAsset(url, {
          status_code: Number(status ?? 0),
          content_length: Number(size ?? 0),
          remarks: redirect ? `redirect: ${redirect.trim()}` : '',
          method: 'GET',
          source: opts.source,
          raw_json_data: raw,
        }),
      },
    ];
  },
};
