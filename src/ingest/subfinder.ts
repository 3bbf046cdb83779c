/**
 * subfinder JSON lines (`subfinder -oJ -o subs.jsonl`) → assets: each `{host, input, source}`
 * is a domain asset (input = the root domain searched). Hosts outside the searched domain are
 * kept: subfinder itself only reports names under it.
 */
import type { ToolImporter } from './tool-import.js';
import { jsonLines } from './readers.js';
import { accept, reject, str } from './records.js';
import { classifyAsset } from './classify.js';

export const subfinderImporter: ToolImporter = {
  name: 'subfinder',
  input: 'JSON lines (subfinder -oJ -o subs.jsonl)',
  maps: 'host → domain asset (input = the searched domain)',
  reader: jsonLines(),
  rows(record, _raw, opts) {
    const host = str(record.host).toLowerCase().replace(/\.$/, '');
    if (host === '') return [{ kind: 'asset', row: reject('host: required') }];
    if (classifyAsset(host) !== 'domain') return [{ kind: 'asset', row: reject(`host: not a domain name: ${JSON.stringify(host.slice(0, 200))}`) }];
    return [{ kind: 'asset', row: accept({ asset_value: host, asset_type: 'domain', input: str(record.input), source: opts.source }) }];
  },
};
