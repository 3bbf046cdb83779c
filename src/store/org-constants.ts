/** An org filter: one org uuid, or a set of them (the orgs a credential is bound to). */
export type OrgFilter = string | readonly string[];

/** The default org: every row without another org belongs to it; it cannot be renamed or deleted. */
export const DEFAULT_ORG_UUID = '00000000-0000-0000-0000-000000000001';
export const DEFAULT_ORG_NAME = 'default';

/**
 * SQL for the org of workspace `param` (a bound parameter such as `@workspace` or `?`): the org of
 * its workspaces row, else the default org. One lookup on the unique name index inside the INSERT
 * itself, so it is atomic with the insert and costs no extra round trip on the ingest path.
 */
export function orgOfWorkspaceSql(param: string): string {
  return `COALESCE((SELECT org_uuid FROM workspaces WHERE name = ${param}), '${DEFAULT_ORG_UUID}')`;
}

/**
 * The WHERE term of the partial org indexes of assets and vulnerabilities (migration 007); a query
 * must contain this exact term for SQLite to use them. Never change it: it is part of the schema.
 */
export const NOT_DEFAULT_ORG = `org_uuid <> '${DEFAULT_ORG_UUID}'`;

/**
 * The `?org=` condition for assets or vulnerabilities (`org_uuid = ?`, plus the partial index's
 * term for another org than the default, so idx_*_org_created serves it). With a workspace filter
 * the workspace index drives the query and the org is only checked per row.
 */
export function orgCondition(org: OrgFilter, withWorkspace: boolean): { clause: string; params: unknown[] } {
  if (Array.isArray(org)) {
    // Several orgs (a credential bound to more than one): one IN term; none matches nothing.
    if (org.length === 0) return { clause: '1 = 0', params: [] };
    if (org.length > 1) return { clause: `org_uuid IN (${org.map(() => '?').join(', ')})`, params: [...org] };
    return orgCondition(org[0]!, withWorkspace);
  }
  if (withWorkspace || org === DEFAULT_ORG_UUID) return { clause: 'org_uuid = ?', params: [org] };
  return { clause: `org_uuid = ? AND ${NOT_DEFAULT_ORG}`, params: [org] };
}

/** Adds "`column` names a workspace of these orgs" to `where` (a subquery on the workspaces' org index). */
export function inWorkspacesOf(where: { add(clause: string, ...params: unknown[]): unknown }, column: string, orgs: OrgFilter): void {
  const list = typeof orgs === 'string' ? [orgs] : orgs;
  if (list.length === 0) {
    where.add('1 = 0');
    return;
  }
  where.add(`${column} IN (SELECT name FROM workspaces WHERE org_uuid IN (${list.map(() => '?').join(', ')}))`, ...list);
}
