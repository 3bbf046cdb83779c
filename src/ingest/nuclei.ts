/**
 * nuclei JSONL → vulnerabilities (reference §3.5): template-id is the vulnerability id, info.*
 * gives title, description, severity and tags, host (else matched-at) is the asset, matched-at
 * is kept as the proof of concept. The fingerprint (workspace, template, asset, matcher) dedupes.
 */
import type { VulnInput } from '../store/index.js';
import { SEVERITIES } from '../store/index.js';
import { accept, asObject, reject, str, type Mapped } from './records.js';

/** True when a record is nuclei output (has template-id or an info object). */
export function isNucleiRecord(record: Record<string, unknown>): boolean {
  return record['template-id'] !== undefined || asObject(record.info) !== undefined;
}

/** Maps one nuclei finding; `raw` is the original text (stored as raw_vuln_json). */
export function nucleiToVuln(record: Record<string, unknown>, raw: string): Mapped<VulnInput> {
  const info = asObject(record.info) ?? {};
  const templateId = str(record['template-id']) || str(record.template_id) || str(record.templateID);
  if (templateId === '') return reject('template-id: required');
  const matchedAt = str(record['matched-at']) || str(record.matched);
  const asset = str(record.host) || matchedAt;
  if (asset === '') return reject('host: required (or matched-at)');
  return accept({
    vuln_info: templateId,
    template_id: templateId,
    vuln_title: str(info.name),
    vuln_desc: str(info.description),
    vuln_poc: matchedAt,
    severity: str(info.severity) || 'info',
    confidence: 'Firm',
    asset_type: str(record.type),
    asset_value: asset,
    matcher_name: str(record['matcher-name']) || str(record.matcher_name),
    tags: tagList(info.tags),
    detail_http_request: str(record.request),
    detail_http_response: str(record.response),
    raw_vuln_json: raw,
  });
}

const TEXT_FIELDS = ['vuln_info', 'vuln_title', 'vuln_desc', 'vuln_poc', 'confidence', 'asset_type', 'asset_value', 'template_id', 'matcher_name', 'detail_http_request', 'detail_http_response'] as const;

/** Maps a record in the API's Vulnerability shape; every problem of the record is listed. */
export function vulnRecordToInput(record: Record<string, unknown>): Mapped<VulnInput> {
  const issues: string[] = [];
  const out: Record<string, unknown> = {};
  for (const k of TEXT_FIELDS) {
    const v = record[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') issues.push(`${k}: expected a string`);
    else out[k] = v;
  }
  if (record.severity !== undefined && record.severity !== null && record.severity !== '') {
    const s = typeof record.severity === 'string' ? record.severity.trim().toLowerCase() : '';
    if (!(SEVERITIES as readonly string[]).includes(s)) issues.push(`severity: must be one of ${SEVERITIES.join(', ')}`);
    else out.severity = s;
  }
  if (record.tags !== undefined && record.tags !== null) {
    if (!Array.isArray(record.tags) || record.tags.some((t) => typeof t !== 'string')) issues.push('tags: expected an array of strings');
    else out.tags = record.tags;
  }
  if (record.raw_vuln_json !== undefined && record.raw_vuln_json !== null) {
    out.raw_vuln_json = typeof record.raw_vuln_json === 'string' ? record.raw_vuln_json : JSON.stringify(record.raw_vuln_json);
  }
  if (!str(out.vuln_info) && !str(out.template_id)) issues.push('vuln_info: required (or template_id)');
  return issues.length > 0 ? reject(issues.join('; ')) : accept(out as VulnInput);
}

function tagList(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(str).filter(Boolean);
  const s = str(v);
  return s ? s.split(',').map((x) => x.trim()).filter(Boolean) : [];
}
