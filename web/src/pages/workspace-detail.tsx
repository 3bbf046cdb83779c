/**
 * One workspace: its assets, vulnerabilities, runs, files (artifacts) and changes between runs,
 * and a snapshot export.
 */
import { useState } from 'preact/hooks';
import { api, request, saveBlob, type List } from '../lib/api.js';
import { can } from '../lib/auth.js';
import { useApi } from '../lib/use-api.js';
import { seg, useQueryParam } from '../lib/router.js';
import { count } from '../lib/format.js';
import { Time } from '../components/bits.js';
import { ErrorBox, Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import { AssetTable } from './assets.js';
import { VulnTable } from './vulns.js';
import { RunTable } from './run-table.js';
import { ArtifactList } from './artifacts.js';
import type { Artifact, Diff, Run, Workspace } from '../types.js';

const TABS = ['assets', 'vulnerabilities', 'runs', 'files', 'changes'] as const;
type Tab = (typeof TABS)[number];

function DiffList({ title, rows }: { title: string; rows: Diff[] }) {
  return (
    <>
      <h3>{title}</h3>
      {rows.length === 0 ? (
        <p class="muted">No recorded change yet: each completed run records what it added and removed.</p>
      ) : (
        <ol class="diffs">
          {rows.map((d) => {
            let data: Record<string, unknown[]> = {};
            try {
              data = JSON.parse(d.diff_data) as Record<string, unknown[]>;
            } catch {
              /* shown as counts only */
            }
            return (
              <li>
                <details>
                  <summary>
                    <Time value={d.to_time} /> — new {count(d.total_added)}, removed {count(d.total_removed)}, changed {count(d.total_changed)}
                    {Array.isArray(data.resurfaced) ? `, resurfaced ${count(data.resurfaced.length)}` : ''}
                    {d.run_id ? <span class="muted small"> (run {d.run_id})</span> : null}
                  </summary>
                  {Object.entries(data)
                    .filter(([, v]) => Array.isArray(v) && v.length)
                    .map(([k, v]) => (
                      <div>
                        <h4>
                          {k === 'added' ? 'new' : k} {v.length}
                        </h4>
                        <ul class="mono small">
                          {v.slice(0, 200).map((item) => {
                            const o = item as Record<string, unknown>;
                            return <li>{String(o.asset_value ?? o.url ?? o.vuln_info ?? o.vuln_title ?? JSON.stringify(o))}</li>;
                          })}
                          {v.length > 200 && <li class="muted">… {v.length - 200} more</li>}
                        </ul>
                      </div>
                    ))}
                </details>
              </li>
            );
          })}
        </ol>
      )}
    </>
  );
}

function Changes({ name }: { name: string }) {
  const assets = useApi((signal) => api<List<Diff>>('/osm/api/assets/diffs', { query: { workspace: name, limit: 50 }, signal }), [name]);
  const vulns = useApi((signal) => api<List<Diff>>('/osm/api/vulnerabilities/diffs', { query: { workspace: name, limit: 50 }, signal }), [name]);
  return (
    <>
      <Loaded data={assets.data} error={assets.error} loading={assets.loading} retry={assets.reload}>
        {(d) => <DiffList title="Assets" rows={d.data} />}
      </Loaded>
      <Loaded data={vulns.data} error={vulns.error} loading={vulns.loading} retry={vulns.reload}>
        {(d) => <DiffList title="Vulnerabilities" rows={d.data} />}
      </Loaded>
    </>
  );
}

function Runs({ name }: { name: string }) {
  const runs = useApi((signal) => api<List<Run>>('/osm/api/runs', { query: { workspace: name, limit: 50 }, signal }), [name]);
  return (
    <Loaded data={runs.data} error={runs.error} loading={runs.loading} retry={runs.reload} empty={(d) => d.data.length === 0} emptyText="No runs in this workspace.">
      {(d) => <RunTable runs={d.data} />}
    </Loaded>
  );
}

function Files({ name }: { name: string }) {
  const files = useApi((signal) => api<List<Artifact>>('/osm/api/artifacts', { query: { workspace: name, verify_exist: true, limit: 500 }, signal }), [name]);
  return (
    <Loaded data={files.data} error={files.error} loading={files.loading} retry={files.reload} empty={(d) => d.data.length === 0} emptyText="No files recorded for this workspace.">
      {(d) => <ArtifactList artifacts={d.data} />}
    </Loaded>
  );
}

export function WorkspacePage({ name }: { name: string }) {
  const ws = useApi((signal) => api<{ data: Workspace }>(`/osm/api/workspaces/${seg(name)}`, { signal }), [name]);
  const [tabText, setTab] = useQueryParam('tab', 'assets');
  const tab: Tab = (TABS as readonly string[]).includes(tabText) ? (tabText as Tab) : 'assets';
  const [exportError, setExportError] = useState<Error | undefined>();
  const [exporting, setExporting] = useState(false);
  const exportSnapshot = async () => {
    setExporting(true);
    setExportError(undefined);
    try {
      const res = await request('/osm/api/snapshots/export', { method: 'POST', body: { workspace: name } });
      const disposition = res.headers.get('content-disposition') ?? '';
      const file = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? `${name}.zip`;
      saveBlob(await res.blob(), file);
    } catch (err) {
      setExportError(err as Error);
    } finally {
      setExporting(false);
    }
  };
  return (
    <Loaded data={ws.data} error={ws.error} loading={ws.loading} retry={ws.reload}>
      {({ data: w }) => (
        <section>
          <PageHead title={w.name}>
            {can('operator') && (
              <button type="button" class="btn" onClick={() => void exportSnapshot()} disabled={exporting}>
                {exporting ? 'Exporting…' : 'Export snapshot'}
              </button>
            )}
          </PageHead>
          {exportError && <ErrorBox error={exportError} />}
          <p class="counts">
            <span>Assets {count(w.total_assets)}</span> <span>Subdomains {count(w.total_subdomains)}</span> <span>URLs {count(w.total_urls)}</span> <span>Vulnerabilities {count(w.total_vulns)}</span> <span>Risk {w.risk_score}</span>{' '}
            <span>
              Last run <Time value={w.last_run} />
            </span>
          </p>
          <div class="tabs" role="tablist" aria-label="Workspace data">
            {TABS.map((t) => (
              <button type="button" role="tab" id={`tab-${t}`} aria-selected={tab === t} aria-controls="tab-panel" tabIndex={tab === t ? 0 : -1} onClick={() => setTab(t)} onKeyDown={(e) => {
                const i = TABS.indexOf(t);
                const next = e.key === 'ArrowRight' ? TABS[(i + 1) % TABS.length] : e.key === 'ArrowLeft' ? TABS[(i + TABS.length - 1) % TABS.length] : undefined;
                if (next) {
                  setTab(next);
                  document.getElementById(`tab-${next}`)?.focus();
                }
              }}>
                {t}
              </button>
            ))}
          </div>
          <div id="tab-panel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
            {tab === 'assets' && <AssetTable workspace={w.name} />}
            {tab === 'vulnerabilities' && <VulnTable workspace={w.name} />}
            {tab === 'runs' && <Runs name={w.name} />}
            {tab === 'files' && <Files name={w.name} />}
            {tab === 'changes' && <Changes name={w.name} />}
          </div>
        </section>
      )}
    </Loaded>
  );
}
