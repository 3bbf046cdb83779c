/**
 * SARIF 2.1.0 (reference `db_import_sarif`) → vulnerabilities: each `runs[].results[]` entry is a
 * finding named by its ruleId on the file it points at (first location's artifact URI), with the
 * line as matcher (or the result's partialFingerprints, which survive edits above the line).
 * Severity: the rule's `security-severity` score when given (≥9 critical, ≥7 high, ≥4 medium,
 * >0 low), else the level (error high, warning medium, note low, none info). Streamed: rules are
 * remembered as they pass (SARIF writes tool.driver before results).
 */
import type { ToolImporter } from './tool-import.js';
import { jsonPaths } from './readers.js';
import { accept, asObject, reject, str } from './records.js';

const LEVEL: Record<string, string> = { error: 'high', warning: 'medium', note: 'low', none: 'info' };

function scoreSeverity(score: number): string {
  if (score >= 9) return 'critical';
  if (score >= 7) return 'high';
  if (score >= 4) return 'medium';
  return score > 0 ? 'low' : 'info';
}

interface Rule {
  name: string;
  description: string;
  score: number;
  tags: string[];
}

export const sarifImporter: ToolImporter = {
  name: 'sarif',
  input: 'SARIF 2.1.0 JSON (any static analyser)',
  maps: 'result → finding <ruleId> on the file it points at (line or partial fingerprint as matcher)',
  reader: jsonPaths(['$.runs.*.tool.driver.rules.*', '$.runs.*.results.*']),
  rows: () => [],
  session() {
    const rules = new Map<string, Rule>();
    return {
      rows(record, raw) {
        if (record.message === undefined && record.ruleId === undefined) {
          const id = str(record.id);
          if (id === '') return [];
          const props = asObject(record.properties) ?? {};
          const text = (o: unknown) => str(asObject(o)?.text);
          rules.set(id, {
            name: text(record.shortDescription) || str(record.name),
            description: text(record.fullDescription) || text(record.help),
            score: Number(props['security-severity']) || 0,
            tags: Array.isArray(props.tags) ? props.tags.map(str).filter(Boolean) : [],
          });
          return [];
        }
        const ruleId = str(record.ruleId) || str(asObject(record.rule)?.id);
        if (ruleId === '') return [{ kind: 'vuln', row: reject('ruleId: required') }];
        const loc = asObject(asObject((Array.isArray(record.locations) ? record.locations[0] : undefined) as unknown)?.physicalLocation);
        const uri = str(asObject(loc?.artifactLocation)?.uri);
        const line = Number(asObject(loc?.region)?.startLine) || 0;
        const fp = asObject(record.partialFingerprints);
        const fingerprint = fp ? str(Object.values(fp)[0]) : '';
        const rule = rules.get(ruleId);
        const score = Number(asObject(record.properties)?.['security-severity']) || rule?.score || 0;
        const message = str(asObject(record.message)?.text);
        return [
          {
            kind: 'vuln',
            row: accept({
              vuln_info: ruleId,
              template_id: ruleId,
              vuln_title: rule?.name || message.slice(0, 200) || ruleId,
              vuln_desc: rule?.description || message,
              vuln_poc: uri ? `${uri}${line ? `:${line}` : ''}: ${message}` : message,
              severity: score > 0 ? scoreSeverity(score) : (LEVEL[str(record.level) || 'warning'] ?? 'medium'),
              confidence: 'Firm',
              asset_type: 'file',
              asset_value: uri || '(no location)',
              matcher_name: fingerprint || (line ? String(line) : ''),
              tags: ['sarif', ...(rule?.tags ?? [])],
              raw_vuln_json: raw,
            }),
          },
        ];
      },
      end: () => [],
    };
  },
};
