/** Runs: filters by status, workflow and target, server-side pages, updated live. */
import { useId } from 'preact/hooks';
import { api, type List } from '../lib/api.js';
import { useApi, useInterval } from '../lib/use-api.js';
import { useLive } from '../lib/live.js';
import { useQueryParam } from '../lib/router.js';
import { can } from '../lib/auth.js';
import { Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import { Pager } from '../components/pager.js';
import { RunTable } from './run-table.js';
import type { Run } from '../types.js';

export const RUN_STATUSES = ['queued', 'pending', 'running', 'completed', 'failed', 'cancelled'];

export function RunsPage() {
  const [status, setStatus] = useQueryParam('status');
  const [workflow, setWorkflow] = useQueryParam('workflow');
  const [target, setTarget] = useQueryParam('target');
  const [offsetText, setOffset] = useQueryParam('offset', '0');
  const [limitText, setLimit] = useQueryParam('limit', '20');
  const offset = Number(offsetText) || 0;
  const limit = Number(limitText) || 20;
  const id = useId();
  const runs = useApi((signal) => api<List<Run>>('/osm/api/runs', { query: { status, workflow_name: workflow, target, offset, limit }, signal }), [status, workflow, target, offset, limit]);
  const mode = useLive((c) => {
    if (c.kind === 'run') runs.reload();
  });
  const active = runs.data?.data.some((r) => ['running', 'queued', 'pending'].includes(r.status)) ?? false;
  useInterval(runs.reload, active ? 2000 : 10_000, mode !== 'live');
  return (
    <section>
      <PageHead title="Runs">
        {can('operator') && (
          <a class="btn primary" href="/runs/new">
            New run
          </a>
        )}
      </PageHead>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for={`${id}-s`}>Status</label>
          <select id={`${id}-s`} value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}>
            <option value="">Any status</option>
            {RUN_STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for={`${id}-w`}>Workflow</label>
          <input id={`${id}-w`} type="search" placeholder="Workflow name" value={workflow} onChange={(e) => setWorkflow((e.target as HTMLInputElement).value.trim())} />
        </div>
        <div class="field">
          <label for={`${id}-t`}>Target</label>
          <input id={`${id}-t`} type="search" placeholder="Target" value={target} onChange={(e) => setTarget((e.target as HTMLInputElement).value.trim())} />
        </div>
      </form>
      <Loaded
        data={runs.data}
        error={runs.error}
        loading={runs.loading}
        retry={runs.reload}
        empty={(d) => d.data.length === 0}
        emptyText={status || workflow || target ? 'No run matches these filters.' : 'No runs yet.'}
      >
        {(d) => (
          <>
            <RunTable runs={d.data} />
            <Pager offset={offset} limit={limit} total={d.pagination.total} onOffset={(o) => setOffset(String(o))} onLimit={(l) => setLimit(String(l))} busy={runs.loading} />
          </>
        )}
      </Loaded>
    </section>
  );
}
