/** Vulnerability use cases shared by /vulnerabilities* and `osm vulns`. */
import { z } from 'zod';
import { errors } from '../errors.js';
import { SEVERITIES, type AsyncStore, type ListResult, type Page, type Severity, type VulnInput, type VulnListFilter, type VulnRecord } from '../store/index.js';
import { AsyncRecordImporter, vulnUpsert, type ImportKind } from '../ingest/importer.js';
import { isNucleiRecord, nucleiToVuln, vulnRecordToInput } from '../ingest/nuclei.js';
import { asObject } from '../ingest/records.js';
import { parseNumericId } from './assets.js';
import { inScope, UNRESTRICTED, workspaceInScope, type Scope } from '../auth/scope.js';
import type { OrgFilter } from '../store/org-constants.js';

/** The most records one POST /vulnerabilities/import may carry. */
export const MAX_IMPORT_RECORDS = 10_000;

/** Splits and validates a severity filter (one value or a comma list); unknown values are a 400. */
export function parseSeverityList(text: string | undefined): Severity[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const values = text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const v of values) if (!(SEVERITIES as readonly string[]).includes(v)) throw errors.invalidSeverity(v);
  return values.length > 0 ? (values as Severity[]) : undefined;
}

/** Filtered page of vulnerabilities (confidence filters rows and total alike). */
export function listVulns(app: { repos: AsyncStore }, filter: VulnListFilter, page: Page): Promise<ListResult<VulnRecord>> {
  return app.repos.vulns.list(
    { workspace: filter.workspace || undefined, severity: filter.severity, confidence: filter.confidence || undefined, asset_value: filter.asset_value || undefined, org_uuid: filter.org_uuid || undefined },
    page,
  );
}

/** Counts by severity (all five always present) of one workspace, or of all when none is given (within one org when given). */
export async function vulnSummary(app: { repos: AsyncStore }, workspace?: string, orgUuid?: OrgFilter) {
  const ws = workspace?.trim() ?? '';
  const s = await app.repos.vulns.summary(ws === '' ? undefined : ws, orgUuid || undefined);
  return { by_severity: { critical: s.critical, high: s.high, medium: s.medium, low: s.low, info: s.info }, total: s.total, workspace: ws };
}

/** One vulnerability; 400 Invalid vulnerability ID, 404 Vulnerability not found. */
export async function getVuln(app: { repos: AsyncStore }, idText: string, scope: Scope = UNRESTRICTED): Promise<VulnRecord> {
  const v = await app.repos.vulns.get(parseNumericId(idText, errors.invalidVulnId));
  if (!v || !inScope(scope, v.org_uuid)) throw errors.vulnNotFound();
  return v;
}

/** Deletes one vulnerability; same errors as getVuln. */
export async function deleteVuln(app: { repos: AsyncStore }, idText: string, scope: Scope = UNRESTRICTED): Promise<void> {
  const id = (await getVuln(app, idText, scope)).id;
  if (!(await app.repos.vulns.delete(id))) throw errors.vulnNotFound();
}

const optText = z.string().nullish().transform((v) => v ?? undefined);
const severity = z
  .string()
  .nullish()
  .transform((v) => (v ? v.trim().toLowerCase() : undefined))
  .refine((v) => v === undefined || (SEVERITIES as readonly string[]).includes(v), { message: `must be one of ${SEVERITIES.join(', ')}` });

/** Body of POST /vulnerabilities (workspace is checked first, with its own message). */
export const createVulnSchema = z.object({
  workspace: z.string(),
  vuln_info: optText,
  vuln_title: optText,
  vuln_desc: optText,
  vuln_poc: optText,
  severity,
  confidence: optText,
  asset_type: optText,
  asset_value: optText,
  tags: z.array(z.string()).nullish().transform((v) => v ?? undefined),
  detail_http_request: optText,
  detail_http_response: optText,
  raw_vuln_json: z
    .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
    .nullish()
    .transform((v) => (v === null || v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v))),
});

function requireWorkspace(body: unknown): Record<string, unknown> {
  const obj = asObject(body);
  if (!obj) throw errors.invalidBody();
  if (typeof obj.workspace !== 'string' || obj.workspace.trim() === '') throw errors.workspaceRequired();
  return obj;
}

/**
 * A credential bound to orgs writes findings only into an existing workspace of its orgs (a new
 * workspace would land in the default org, outside its reach): 404 otherwise.
 */
async function writableWorkspace(app: { repos: AsyncStore }, scope: Scope, name: string): Promise<void> {
  if (scope.orgs === null) return;
  if (!(await app.repos.workspaces.get(name)) || !(await workspaceInScope(app.repos, scope, name))) throw errors.workspaceNotFound(name);
}

/** POST /vulnerabilities: plain insert (no dedupe), confidence defaults to Certain. */
export async function createVuln(app: { repos: AsyncStore }, body: unknown, scope: Scope = UNRESTRICTED): Promise<VulnRecord> {
  const r = createVulnSchema.safeParse(requireWorkspace(body));
  if (!r.success) throw errors.invalidBody(r.error.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; '));
  const { workspace, ...fields } = r.data;
  await writableWorkspace(app, scope, workspace.trim());
  return app.repos.vulns.create({ ...(fields as VulnInput), workspace: workspace.trim() });
}

export interface VulnImportResult {
  message: string;
  imported: number;
  updated: number;
  /** Records already present and unchanged. */
  skipped: number;
  errors: { index: number; message: string }[];
}

/** Records of either shape: nuclei output (template-id / info) or the API's Vulnerability. */
const anyVulnKind: ImportKind<VulnInput> = {
  kind: 'vuln',
  map: (record, raw) => (isNucleiRecord(record) ? nucleiToVuln(record, raw) : vulnRecordToInput(record)),
  upsert: vulnUpsert,
};

/** POST /vulnerabilities/import: upsert by fingerprint; bad records are listed by index, never fatal. */
export async function importVulns(app: { repos: AsyncStore }, body: unknown, scope: Scope = UNRESTRICTED): Promise<VulnImportResult> {
  const obj = requireWorkspace(body);
  await writableWorkspace(app, scope, (obj.workspace as string).trim());
  if (!Array.isArray(obj.data)) throw errors.validation('data: expected an array of records');
  if (obj.data.length > MAX_IMPORT_RECORDS) throw errors.importTooManyRecords(MAX_IMPORT_RECORDS);
  const importer = new AsyncRecordImporter(app.repos, obj.workspace as string, anyVulnKind, { eventSource: 'api', maxErrorLines: MAX_IMPORT_RECORDS });
  const records: unknown[] = obj.data;
  for (const [index, rec] of records.entries()) {
    const record = asObject(rec);
    if (record) importer.record(index, record);
    else {
      importer.stats.total++;
      importer.fail(index, 'not a JSON object');
    }
    // A filled batch is stored before more records are read.
    await importer.settle();
  }
  const s = await importer.finish();
  return {
    message: `Imported ${s.new} new and ${s.updated} updated vulnerabilities`,
    imported: s.new,
    updated: s.updated,
    skipped: s.unchanged,
    errors: s.error_lines.map((e) => ({ index: e.line, message: e.message })),
  };
}
