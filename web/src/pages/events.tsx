/** Events (the event log, filtered by topic and workspace, updated live) and webhook-triggered runs. */
import { useId } from 'preact/hooks';
import { api, type List } from '../lib/api.js';
import { can } from '../lib/auth.js';
import { useApi, useInterval } from '../lib/use-api.js';
import { useLive } from '../lib/live.js';
import { seg, useQueryParam } from '../lib/router.js';
import { Time } from '../components/bits.js';
import { Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import { Pager } from '../components/pager.js';
import type { EventLog } from '../types.js';

const TOPICS = ['run.started', 'run.completed', 'run.failed', 'run.cancelled', 'step.completed', 'step.failed', 'asset.discovered', 'asset.updated', 'schedule.triggered', 'webhook.received'];

interface WebhookRun {
  id: number;
  webhook_uuid: string;
  workflow_name: string;
  target: string;
  trigger_count: number;
  last_triggered_at: string | null;
  last_run_uuid: string;
  webhook_url: string;
  webhook_auth_key: string;
  created_at: string;
}

function Webhooks() {
  const list = useApi((signal) => api<{ data: WebhookRun[]; total: number }>('/osm/api/webhook-runs/list', { signal }), []);
  return (
    <>
      <h2>Webhook-triggered runs</h2>
      <Loaded data={list.data} error={list.error} loading={list.loading} retry={list.reload} empty={(d) => d.data.length === 0} emptyText={<>None yet: <code>osm run … --as-webhook</code> registers one.</>}>
        {(d) => (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Workflow</th>
                  <th>Target</th>
                  <th>Trigger URL</th>
                  <th>Key</th>
                  <th>Triggered</th>
                  <th>Last</th>
                </tr>
              </thead>
              <tbody>
                {d.data.map((w) => (
                  <tr key={w.webhook_uuid}>
                    <td>{w.workflow_name}</td>
                    <td class="wrap">{w.target}</td>
                    <td class="mono small wrap">{w.webhook_url}</td>
                    <td>{w.webhook_auth_key ? 'required' : 'none'}</td>
                    <td>{w.trigger_count}</td>
                    <td>{w.last_run_uuid ? <a href={`/runs/${seg(w.last_run_uuid)}`}><Time value={w.last_triggered_at} /></a> : <Time value={w.last_triggered_at} />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loaded>
      <p class="muted small">Outbound webhooks (notifications on finished runs) are configured under notification.webhooks on the Settings page.</p>
    </>
  );
}

export function EventsPage() {
  const id = useId();
  const [topic, setTopic] = useQueryParam('topic');
  const [workspace, setWorkspace] = useQueryParam('workspace');
  const [offsetText, setOffset] = useQueryParam('offset', '0');
  const offset = Number(offsetText) || 0;
  const limit = 50;
  const list = useApi((signal) => api<List<EventLog>>('/osm/api/event-logs', { query: { topic, workspace, offset, limit }, signal }), [topic, workspace, offset]);
  const mode = useLive(() => {
    if (offset === 0) list.reload();
  });
  useInterval(list.reload, 5000, mode !== 'live' && offset === 0);
  return (
    <section>
      <PageHead title="Events" />
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for={`${id}-t`}>Topic</label>
          <select id={`${id}-t`} value={topic} onChange={(e) => setTopic((e.target as HTMLSelectElement).value)}>
            <option value="">Any topic</option>
            {TOPICS.map((t) => (
              <option value={t}>{t}</option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for={`${id}-w`}>Workspace</label>
          <input id={`${id}-w`} type="search" placeholder="Workspace" value={workspace} onChange={(e) => setWorkspace((e.target as HTMLInputElement).value.trim())} />
        </div>
      </form>
      <Loaded data={list.data} error={list.error} loading={list.loading} retry={list.reload} empty={(d) => d.data.length === 0} emptyText="No events recorded.">
        {(d) => (
          <>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Topic</th>
                    <th>Name</th>
                    <th>Source</th>
                    <th>Workspace</th>
                    <th>Run</th>
                    <th>Detail</th>
                  </tr>
                </thead>
                <tbody>
                  {d.data.map((e) => (
                    <tr key={e.id}>
                      <td>
                        <Time value={e.created_at} />
                      </td>
                      <td>{e.topic}</td>
                      <td class="wrap">{e.name}</td>
                      <td>{e.source}</td>
                      <td>{e.workspace ? <a href={`/workspaces/${seg(e.workspace)}`}>{e.workspace}</a> : '—'}</td>
                      <td>{e.run_id ? <a href={`/runs/${seg(e.run_id)}`}>{e.workflow_name || 'run'}</a> : '—'}</td>
                      <td class="wrap">
                        <details>
                          <summary>data</summary>
                          <pre class="preview small">{e.data}</pre>
                          {e.error && <p class="error-text">{e.error}</p>}
                        </details>
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
      {can('operator') && <Webhooks />}
    </section>
  );
}
