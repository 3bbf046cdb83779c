/** Workspaces: counts per workspace, search, and importing a snapshot (admins). */
import { useId, useState } from 'preact/hooks';
import { api, type List } from '../lib/api.js';
import { can } from '../lib/auth.js';
import { useApi } from '../lib/use-api.js';
import { navigate, seg, useQueryParam } from '../lib/router.js';
import { count } from '../lib/format.js';
import { Time } from '../components/bits.js';
import { ErrorBox, Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import { Pager } from '../components/pager.js';
import type { Workspace } from '../types.js';

function ImportSnapshot() {
  const id = useId();
  const [file, setFile] = useState<File | undefined>();
  const [force, setForce] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!file) return;
    setBusy(true);
    setError(undefined);
    try {
      const form = new FormData();
      form.append('force', String(force));
      form.append('file', file);
      const r = await api<{ workspace: string }>('/osm/api/snapshots/import', { method: 'POST', body: form });
      navigate(`/workspaces/${seg(r.workspace)}`);
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <details class="card">
      <summary>Import a snapshot</summary>
      <form class="form" onSubmit={submit}>
        <div class="field">
          <label for={`${id}-f`}>Snapshot file (.zip)</label>
          <input id={`${id}-f`} type="file" accept=".zip,application/zip" required onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0])} />
          <small class="hint">Only import snapshots from sources you trust.</small>
        </div>
        <label class="inline">
          <input type="checkbox" checked={force} onChange={(e) => setForce((e.target as HTMLInputElement).checked)} /> Replace a workspace of the same name
        </label>
        {error && <ErrorBox error={error} />}
        <div class="actions">
          <button type="submit" class="btn primary" disabled={busy || !file}>
            Import
          </button>
        </div>
      </form>
    </details>
  );
}

export function WorkspacesPage() {
  const id = useId();
  const [search, setSearch] = useQueryParam('search');
  const [offsetText, setOffset] = useQueryParam('offset', '0');
  const offset = Number(offsetText) || 0;
  const limit = 50;
  const list = useApi((signal) => api<List<Workspace>>('/osm/api/workspaces', { query: { search, offset, limit }, signal }), [search, offset]);
  return (
    <section>
      <PageHead title="Workspaces" />
      {can('admin') && <ImportSnapshot />}
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field grow">
          <label for={`${id}-q`}>Search</label>
          <input id={`${id}-q`} type="search" placeholder="Search" value={search} onChange={(e) => setSearch((e.target as HTMLInputElement).value.trim())} />
        </div>
      </form>
      <Loaded data={list.data} error={list.error} loading={list.loading} retry={list.reload} empty={(d) => d.data.length === 0} emptyText={search ? 'No workspace matches.' : 'No workspaces yet: every run writes into one.'}>
        {(d) => (
          <>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Assets</th>
                    <th>Subdomains</th>
                    <th>URLs</th>
                    <th>Vulnerabilities</th>
                    <th>Risk</th>
                    <th>Source</th>
                    <th>Last run</th>
                  </tr>
                </thead>
                <tbody>
                  {d.data.map((w) => (
                    <tr key={w.name}>
                      <td>
                        <a href={`/workspaces/${seg(w.name)}`}>{w.name}</a>
                      </td>
                      <td>{count(w.total_assets)}</td>
                      <td>{count(w.total_subdomains)}</td>
                      <td>{count(w.total_urls)}</td>
                      <td>
                        {count(w.total_vulns)}
                        {w.total_vulns > 0 && (
                          <span class="muted small">
                            {' '}
                            (critical {w.vuln_critical}, high {w.vuln_high}, medium {w.vuln_medium}, low {w.vuln_low})
                          </span>
                        )}
                      </td>
                      <td>{w.risk_score}</td>
                      <td>{w.data_source}</td>
                      <td>
                        <Time value={w.last_run} />
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
    </section>
  );
}
