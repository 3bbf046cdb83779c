/**
 * WhatWeb JSON (`whatweb --log-json=out.json`) → assets: each target becomes the URL asset of its
 * host with the HTTP status, the page title, the address (IP plugin), the HTTP server (remarks,
 * as httpx's webserver) and the identified technologies as `Name:version` (httpx's spelling), so
 * a fingerprint merges into the same row an httpx probe of that URL made. WhatWeb writes a JSON
 * array one element per line, so the file is read line by line.
 */
import type { ToolImporter } from './tool-import.js';
import { urlAsset } from './web-rows.js';
import { jsonLines } from './readers.js';
import { asObject, str } from './records.js';

/** Plugins that describe the response rather than a technology. */
const NOT_TECH = new Set([
  'Country', 'IP', 'Title', 'HTTPServer', 'RedirectLocation', 'UncommonHeaders', 'X-Frame-Options', 'X-XSS-Protection',
  'Strict-Transport-Security', 'HttpOnly', 'Cookies', 'Email', 'Script', 'HTML5', 'Frame', 'Meta-Author', 'Meta-Refresh-Redirect',
  'PasswordField', 'X-UA-Compatible', 'Content-Security-Policy', 'Via-Proxy', 'Access-Control-Allow-Methods', 'MetaGenerator',
  'X-Powered-By', 'Allow', 'Object', 'Open-Graph-Protocol', 'Google-Analytics', 'Query', 'Opengraph',
]);

function first(plugin: unknown, key: string): string {
  const list = asObject(plugin)?.[key];
  return Array.isArray(list) ? str(list[0]) : '';
}

export const whatwebImporter: ToolImporter = {
  name: 'whatweb',
  input: 'JSON (whatweb --log-json=out.json)',
  maps: 'target → URL asset (status, title, IP, server in remarks, technologies as Name:version)',
  reader: jsonLines({ arrayTolerant: true }),
  rows(record, raw, opts) {
    const plugins = asObject(record.plugins) ?? {};
    const tech: string[] = [];
    for (const [name, value] of Object.entries(plugins).sort(([a], [b]) => a.localeCompare(b))) {
      if (NOT_TECH.has(name)) continue;
      const version = first(value, 'version');
      tech.push(version ? `${name}:${version}` : name);
    }
    return [
      {
        kind: 'asset',
        row: urlAsset(str(record.target), {
          status_code: Number(record.http_status) || 0,
          title: first(plugins.Title, 'string'),
          host_ip: first(plugins.IP, 'string'),
          remarks: first(plugins.HTTPServer, 'string'),
          tech,
          source: opts.source,
          raw_json_data: raw,
        }),
      },
    ];
  },
};
