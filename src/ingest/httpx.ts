/**
 * httpx JSONL → assets (reference §3.5): host (or the URL's host) is the asset value, IPs go to
 * host_ip, `a` (or dns_records) are the A records, tls objects are kept as JSON text, webserver
 * and cdn_name become remarks, CDN/cloud/WAF flags come from cdn, cdn_name and cdn_type.
 */
import type { AssetInput } from '../store/index.js';
import { classifyAsset, hostOf, isCloudProvider, isIpLiteral } from './classify.js';
import { accept, reject, str, type Mapped } from './records.js';

export interface HttpxOptions {
  /** Discovery source stored on each asset (default 'web', as the reference). */
  source?: string;
  /** Keep the whole line as raw_json_data (default true). */
  keepRaw?: boolean;
}

/** Maps one httpx record; `raw` is the original line (stored as raw_json_data). */
export function httpxToAsset(record: Record<string, unknown>, raw: string, opts: HttpxOptions = {}): Mapped<AssetInput> {
  const url = str(record.url);
  const host = str(record.host);
  const input = str(record.input);
  // httpx reports the resolved IP as `host` in some versions: prefer the URL's name for the asset.
  let value = host;
  if (value === '' || (isIpLiteral(value) && url !== '' && !isIpLiteral(hostOf(url)))) value = hostOf(url) || value;
  if (value === '') value = url || input;
  if (value === '') return reject('host: required (or url or input)');

  const a = stringList(record.a ?? record.dns_records);
  const hostIp = str(record.host_ip) || (isIpLiteral(host) ? host : '') || (isIpLiteral(value) ? value : '') || a[0] || '';
  const cdnName = str(record.cdn_name);
  const remarks = [str(record.webserver), cdnName].filter(Boolean).join(',');
  const statusCode = intOf(record.status_code);
  const contentLength = intOf(record.content_length);
  const tls = record.tls === undefined || record.tls === null ? '' : typeof record.tls === 'string' ? record.tls : JSON.stringify(record.tls);

  return accept({
    asset_value: value,
    url,
    input,
    scheme: str(record.scheme),
    method: str(record.method),
    path: str(record.path),
    status_code: statusCode,
    content_type: str(record.content_type),
    content_length: contentLength,
    title: str(record.title),
    words: intOf(record.words),
    lines: intOf(record.lines),
    host_ip: hostIp,
    a,
    tls,
    tech: stringList(record.tech),
    time: str(record.time),
    remarks,
    source: opts.source || 'web',
    is_cdn: record.cdn === true || cdnName !== '',
    is_cloud: isCloudProvider(cdnName),
    is_waf: str(record.cdn_type).toLowerCase() === 'waf',
    asset_type: classifyAsset(url || value, statusCode > 0 || contentLength > 0),
    raw_json_data: opts.keepRaw === false ? '' : raw,
  });
}

/** True when a record looks like httpx output rather than an osm asset. */
export function looksLikeHttpx(record: Record<string, unknown>): boolean {
  return record.asset_value === undefined && (record.url !== undefined || record.host !== undefined || record.input !== undefined);
}

/** Maps an osm-shaped asset record (field names of the API); used by generic imports. */
export function assetRecordToInput(record: Record<string, unknown>, raw: string): Mapped<AssetInput> {
  const value = str(record.asset_value);
  if (value === '') return reject('asset_value: required');
  const input = { ...record, asset_value: value } as AssetInput;
  if (!str(record.asset_type)) input.asset_type = classifyAsset(str(record.url) || value, intOf(record.status_code) > 0);
  if (input.raw_json_data === undefined) input.raw_json_data = raw;
  return accept(input);
}

function intOf(v: unknown): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? Math.trunc(n) : 0;
}

function stringList(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(str).filter(Boolean);
  const s = str(v);
  return s ? s.split(',').map((x) => x.trim()).filter(Boolean) : [];
}

