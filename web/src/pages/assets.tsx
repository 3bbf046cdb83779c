/** Assets: server-side pages, a search box and filters (workspace, type, status code); reused on a workspace's page. */
import { useId } from 'preact/hooks';
import { api, type List } from '../lib/api.js';
import { useApi } from '../lib/use-api.js';
import { seg, useQueryParam } from '../lib/router.js';
import { count } from '../lib/format.js';
import { Time } from '../components/bits.js';
import { Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import { Pager } from '../components/pager.js';
import type { Asset } from '../types.js';

export function AssetTable({ workspace }: { workspace?: string }) {
  const id = useId();
  const [search, setSearch] = useQueryParam('search');
  const [ws, setWs] = useQueryParam('workspace');
  const [type, setType] = useQueryParam('asset_type');
  const [status, setStatus] = useQueryParam('status_code');
  const [offsetText, setOffset] = useQueryParam('offset', '0');
  const [limitText, setLimit] = useQueryParam('limit', '50');
  const offset = Number(offsetText) || 0;
  const limit = Number(limitText) || 50;
  const wsFilter = workspace ?? ws;
  const stats = useApi((signal) => api<{ data: { asset_types: string[] } }>('/osm/api/asset-stats', { query: { workspace: wsFilter }, signal }), [wsFilter]);
  const names = useApi((signal) => (workspace ? Promise.resolve([] as string[]) : api<string[]>('/osm/api/workspace-names', { signal })), [workspace]);
  const assets = useApi((signal) => api<List<Asset>>('/osm/api/assets', { query: { workspace: wsFilter, search, asset_type: type, status_code: status, offset, limit }, signal }), [wsFilter, search, type, status, offset, limit]);
  return (
    <>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field grow">
          <label for={`${id}-q`}>Search</label>
          <input id={`${id}-q`} type="search" placeholder="Search" value={search} onChange={(e) => setSearch((e.target as HTMLInputElement).value.trim())} />
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
        <div class="field">
          <label for={`${id}-t`}>Type</label>
          <select id={`${id}-t`} value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value)}>
            <option value="">Any type</option>
            {(stats.data?.data.asset_types ?? []).map((t) => (
              <option value={t}>{t}</option>
            ))}
          </select>
        </div>
        <div class="field narrow">
          <label for={`${id}-s`}>Status code</label>
          <input id={`${id}-s`} inputMode="numeric" pattern="[0-9]*" placeholder="200" value={status} onChange={(e) => setStatus((e.target as HTMLInputElement).value.trim())} />
        </div>
      </form>
      <Loaded data={assets.data} error={assets.error} loading={assets.loading} retry={assets.reload} empty={(d) => d.data.length === 0} emptyText={search || type || status || ws ? 'No asset matches these filters.' : 'No assets yet: runs add them as they discover hosts and URLs.'}>
        {(d) => (
          <>
            <p class="muted small" aria-live="polite">
              Assets {count(d.pagination.total)}
            </p>
            <div class="table-wrap">
              <table class={assets.loading ? 'busy' : undefined}>
                <thead>
                  <tr>
                    <th>Asset</th>
                    <th>Type</th>
                    <th>Status</th>
                    <th>Title</th>
                    <th>Technologies</th>
                    <th>IP</th>
                    {!workspace && <th>Workspace</th>}
                    <th>Found</th>
                  </tr>
                </thead>
                <tbody>
                  {d.data.map((a) => (
                    <tr key={a.id}>
                      <td class="wrap mono">
                        {a.asset_value}
                        {a.url && a.url !== a.asset_value && <div class="muted small">{a.url}</div>}
                      </td>
                      <td>{a.asset_type}</td>
                      <td>{a.status_code || '—'}</td>
                      <td class="wrap">{a.title}</td>
                      <td class="wrap">
                        {(a.tech ?? []).map((t) => (
                          <span class="tag">{t}</span>
                        ))}
                      </td>
                      <td class="mono">{a.host_ip}</td>
                      {!workspace && (
                        <td>
                          <a href={`/workspaces/${seg(a.workspace)}`}>{a.workspace}</a>
                        </td>
                      )}
                      <td>
                        <Time value={a.created_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager offset={offset} limit={limit} total={d.pagination.total} onOffset={(o) => setOffset(String(o))} onLimit={(l) => setLimit(String(l))} busy={assets.loading} />
          </>
        )}
      </Loaded>
    </>
  );
}

export function AssetsPage() {
  return (
    <section>
      <PageHead title="Assets" />
      <AssetTable />
    </section>
  );
}
