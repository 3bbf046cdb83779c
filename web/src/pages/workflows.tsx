/** Workflows: search, kind and tag filters, and (for admins) uploading a workflow file. */
import { useId, useState } from 'preact/hooks';
import { api, type List } from '../lib/api.js';
import { can } from '../lib/auth.js';
import { useApi } from '../lib/use-api.js';
import { navigate, seg, useQueryParam } from '../lib/router.js';
import { ErrorBox, Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import { Pager } from '../components/pager.js';
import type { Workflow } from '../types.js';

function Upload({ onDone }: { onDone: () => void }) {
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
      form.append('file', file);
      const r = await api<{ name: string }>('/osm/api/workflow-upload', { method: 'POST', body: form, query: { force: force || undefined } });
      onDone();
      navigate(`/workflows/${seg(r.name)}`);
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <details class="card">
      <summary>Upload a workflow</summary>
      <form class="form" onSubmit={submit}>
        <div class="field">
          <label for={`${id}-f`}>Workflow file (.yaml)</label>
          <input id={`${id}-f`} type="file" accept=".yaml,.yml" required onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0])} />
          <small class="hint">Checked before it is saved; a flow goes to flows/, a module to modules/.</small>
        </div>
        <label class="inline">
          <input type="checkbox" checked={force} onChange={(e) => setForce((e.target as HTMLInputElement).checked)} /> Replace a file of the same name
        </label>
        {error && <ErrorBox error={error} />}
        <div class="actions">
          <button type="submit" class="btn primary" disabled={busy || !file}>
            Upload
          </button>
        </div>
      </form>
    </details>
  );
}

export function WorkflowsPage() {
  const id = useId();
  const [search, setSearch] = useQueryParam('search');
  const [kind, setKind] = useQueryParam('kind');
  const [tag, setTag] = useQueryParam('tag');
  const [offsetText, setOffset] = useQueryParam('offset', '0');
  const offset = Number(offsetText) || 0;
  const limit = 50;
  const tags = useApi((signal) => api<{ tags: string[] }>('/osm/api/workflows/tags', { signal }), []);
  const list = useApi((signal) => api<List<Workflow>>('/osm/api/workflows', { query: { search, kind, tags: tag, offset, limit }, signal }), [search, kind, tag, offset]);
  return (
    <section>
      <PageHead title="Workflows" />
      {can('admin') && <Upload onDone={list.reload} />}
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for={`${id}-q`}>Search</label>
          <input id={`${id}-q`} type="search" placeholder="Search" value={search} onChange={(e) => setSearch((e.target as HTMLInputElement).value.trim())} />
        </div>
        <div class="field">
          <label for={`${id}-k`}>Kind</label>
          <select id={`${id}-k`} value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value)}>
            <option value="">Flows and modules</option>
            <option value="flow">flow</option>
            <option value="module">module</option>
          </select>
        </div>
        <div class="field">
          <label for={`${id}-t`}>Tag</label>
          <select id={`${id}-t`} value={tag} onChange={(e) => setTag((e.target as HTMLSelectElement).value)}>
            <option value="">Any tag</option>
            {(tags.data?.tags ?? []).map((t) => (
              <option value={t}>{t}</option>
            ))}
          </select>
        </div>
      </form>
      <Loaded data={list.data} error={list.error} loading={list.loading} retry={list.reload} empty={(d) => d.data.length === 0} emptyText={search || kind || tag ? 'No workflow matches.' : 'No workflow is installed.'}>
        {(d) => (
          <>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Kind</th>
                    <th>Description</th>
                    <th>Steps</th>
                    <th>Params</th>
                    <th>Tags</th>
                  </tr>
                </thead>
                <tbody>
                  {d.data.map((w) => (
                    <tr key={w.name}>
                      <td>
                        <a href={`/workflows/${seg(w.name)}`}>{w.name}</a>
                      </td>
                      <td>{w.kind}</td>
                      <td class="wrap">{w.description}</td>
                      <td>
                        {w.step_count}
                        {w.kind === 'flow' ? <span class="muted small"> in {w.module_count} modules</span> : null}
                      </td>
                      <td>
                        {w.params.length}
                        {w.required_params.length ? <span class="muted small"> ({w.required_params.length} required)</span> : null}
                      </td>
                      <td>
                        {w.tags.map((t) => (
                          <span class="tag">{t}</span>
                        ))}
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
