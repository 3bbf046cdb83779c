/** Vulnerabilities: severity counts that also filter, workspace and text filters, server-side pages. */
import { useId } from 'preact/hooks';
import { api, type List } from '../lib/api.js';
import { useApi } from '../lib/use-api.js';
import { seg, useQueryParam } from '../lib/router.js';
import { count } from '../lib/format.js';
import { SEVERITIES, Severity, Time } from '../components/bits.js';
import { Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import { Pager } from '../components/pager.js';
import type { Vuln } from '../types.js';

export function VulnTable({ workspace }: { workspace?: string }) {
  const id = useId();
  const [severity, setSeverity] = useQueryParam('severity');
  const [ws, setWs] = useQueryParam('workspace');
  const [text, setText] = useQueryParam('asset');
  const [offsetText, setOffset] = useQueryParam('offset', '0');
  const offset = Number(offsetText) || 0;
  const limit = 50;
  const wsFilter = workspace ?? ws;
  const summary = useApi((signal) => api<{ data: { by_severity: Record<string, number>; total: number } }>('/osm/api/vulnerabilities/summary', { query: { workspace: wsFilter }, signal }), [wsFilter]);
  const names = useApi((signal) => (workspace ? Promise.resolve([] as string[]) : api<string[]>('/osm/api/workspace-names', { signal })), [workspace]);
  const list = useApi((signal) => api<List<Vuln>>('/osm/api/vulnerabilities', { query: { workspace: wsFilter, severity, asset_value: text, offset, limit }, signal }), [wsFilter, severity, text, offset]);
  return (
    <>
      <div class="sev-tiles" role="group" aria-label="Filter by severity">
        <button type="button" class="tile" aria-pressed={severity === ''} onClick={() => setSeverity('')}>
          All <b>{count(summary.data?.data.total)}</b>
        </button>
        {SEVERITIES.map((s) => (
          <button type="button" class={`tile tile-${s}`} aria-pressed={severity === s} onClick={() => setSeverity(severity === s ? '' : s)}>
            {s} <b>{count(summary.data?.data.by_severity[s] ?? 0)}</b>
          </button>
        ))}
      </div>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field grow">
          <label for={`${id}-q`}>Search</label>
          <input id={`${id}-q`} type="search" placeholder="Search" title="Part of the affected asset" value={text} onChange={(e) => setText((e.target as HTMLInputElement).value.trim())} />
        </div>
        {!workspace && (
          <div class="field">
            <label for={`${id}-w`}>Workspace</label>
            <select id={`${id}-w`} value={ws} onChange={(e) => setWs((e.target as HTMLSelectElement).value)}>
              <option value="">All workspaces</option>
              {(names.data ?? []).map((n) => (
                <option value={n}>{n}</option>
              ))}
            </select>
          </div>
        )}
      </form>
      <Loaded data={list.data} error={list.error} loading={list.loading} retry={list.reload} empty={(d) => d.data.length === 0} emptyText={severity || text || ws ? 'No finding matches these filters.' : 'No vulnerabilities recorded.'}>
        {(d) => (
          <>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Severity</th>
                    <th>Title</th>
                    <th>Asset</th>
                    <th>Confidence</th>
                    {!workspace && <th>Workspace</th>}
                    <th>Found</th>
                  </tr>
                </thead>
                <tbody>
                  {d.data.map((v) => (
                    <tr key={v.id}>
                      <td>
                        <Severity value={v.severity} />
                      </td>
                      <td class="wrap">
                        <a href={`/vulnerabilities/${seg(v.id)}`}>{v.vuln_title || v.vuln_info || `Finding ${v.id}`}</a>
                      </td>
                      <td class="wrap mono">{v.asset_value}</td>
                      <td>{v.confidence}</td>
                      {!workspace && (
                        <td>
                          <a href={`/workspaces/${seg(v.workspace)}`}>{v.workspace}</a>
                        </td>
                      )}
                      <td>
                        <Time value={v.created_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager offset={offset} limit={limit} total={d.pagination.total} onOffset={(o) => setOffset(String(o))} busy={list.loading} />
          </>
        )}
      </Loaded>
    </>
  );
}

export function VulnsPage() {
  return (
    <section>
      <PageHead title="Vulnerabilities" />
      <VulnTable />
    </section>
  );
}
