/** Schedules: create and edit (cron, event or watch triggers), enable/disable, trigger now, delete (confirmed). */
import { useId, useState } from 'preact/hooks';
import { api, type List } from '../lib/api.js';
import { can } from '../lib/auth.js';
import { useApi } from '../lib/use-api.js';
import { seg, useQueryParam } from '../lib/router.js';
import { Status, Time } from '../components/bits.js';
import { ConfirmDialog } from '../components/dialog.js';
import { ErrorBox, Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import { Pager } from '../components/pager.js';
import type { Schedule, Workflow } from '../types.js';

interface Draft {
  id?: string;
  name: string;
  workflow_name: string;
  target: string;
  trigger_type: 'cron' | 'event' | 'watch';
  schedule: string;
  event_topic: string;
  watch_path: string;
  enabled: boolean;
}

const EMPTY: Draft = { name: '', workflow_name: '', target: '', trigger_type: 'cron', schedule: '0 3 * * *', event_topic: '', watch_path: '', enabled: true };

function draftOf(s: Schedule): Draft {
  const t = s.event_topic ? 'event' : s.watch_path ? 'watch' : 'cron';
  return { id: s.id, name: s.name, workflow_name: s.workflow_name, target: String(s.input_config?.target ?? ''), trigger_type: t, schedule: s.schedule, event_topic: s.event_topic, watch_path: s.watch_path, enabled: s.is_enabled };
}

function ScheduleForm({ initial, onSaved, onClose }: { initial: Draft; onSaved: () => void; onClose: () => void }) {
  const id = useId();
  const [d, setD] = useState(initial);
  const [error, setError] = useState<Error | undefined>();
  const [busy, setBusy] = useState(false);
  const workflows = useApi((signal) => api<List<Workflow>>('/osm/api/workflows', { query: { limit: 10000 }, signal }), []);
  const set = (k: keyof Draft) => (e: Event) => setD({ ...d, [k]: (e.target as HTMLInputElement).type === 'checkbox' ? (e.target as HTMLInputElement).checked : (e.target as HTMLInputElement).value });
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const body: Record<string, unknown> = { name: d.name, workflow_name: d.workflow_name, target: d.target, trigger_type: d.trigger_type, enabled: d.enabled };
    if (d.trigger_type === 'cron') body.schedule = d.schedule;
    if (d.trigger_type === 'event') body.event_topic = d.event_topic;
    if (d.trigger_type === 'watch') body.watch_path = d.watch_path;
    try {
      if (d.id) await api(`/osm/api/schedules/${seg(d.id)}`, { method: 'PUT', body });
      else await api('/osm/api/schedules', { method: 'POST', body });
      onSaved();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card form" onSubmit={submit} aria-label={d.id ? 'Edit schedule' : 'New schedule'}>
      <h2>{d.id ? `Edit ${initial.name}` : 'New schedule'}</h2>
      <div class="row">
        <div class="field">
          <label for={`${id}-n`}>Name</label>
          <input id={`${id}-n`} required value={d.name} onInput={set('name')} />
        </div>
        <div class="field">
          <label for={`${id}-w`}>Workflow or Module</label>
          <input id={`${id}-w`} list={`${id}-wl`} placeholder="Workflow or Module" required value={d.workflow_name} onInput={set('workflow_name')} autoComplete="off" />
          <datalist id={`${id}-wl`}>
            {(workflows.data?.data ?? []).map((w) => (
              <option value={w.name}>{w.kind}</option>
            ))}
          </datalist>
        </div>
        <div class="field">
          <label for={`${id}-t`}>Target</label>
          <input id={`${id}-t`} placeholder="Target" value={d.target} onInput={set('target')} />
        </div>
      </div>
      <div class="row">
        <div class="field">
          <label for={`${id}-k`}>Trigger</label>
          <select id={`${id}-k`} value={d.trigger_type} onChange={set('trigger_type')}>
            <option value="cron">cron</option>
            <option value="event">event</option>
            <option value="watch">watch</option>
          </select>
        </div>
        {d.trigger_type === 'cron' && (
          <div class="field">
            <label for={`${id}-c`}>Cron expression</label>
            <input id={`${id}-c`} class="mono" required value={d.schedule} onInput={set('schedule')} />
            <small class="hint">minute hour day-of-month month day-of-week, e.g. 0 3 * * * (daily at 03:00)</small>
          </div>
        )}
        {d.trigger_type === 'event' && (
          <div class="field">
            <label for={`${id}-e`}>Event topic</label>
            <input id={`${id}-e`} required value={d.event_topic} onInput={set('event_topic')} placeholder="asset.discovered" />
          </div>
        )}
        {d.trigger_type === 'watch' && (
          <div class="field">
            <label for={`${id}-p`}>Watched path</label>
            <input id={`${id}-p`} required value={d.watch_path} onInput={set('watch_path')} />
          </div>
        )}
      </div>
      <label class="inline">
        <input type="checkbox" checked={d.enabled} onChange={set('enabled')} /> Enabled
      </label>
      {error && <ErrorBox error={error} />}
      <div class="actions">
        <button type="button" class="btn" onClick={onClose}>
          Close
        </button>
        <button type="submit" class="btn primary" disabled={busy}>
          {d.id ? 'Save' : 'Create schedule'}
        </button>
      </div>
    </form>
  );
}

export function SchedulesPage() {
  const [offsetText, setOffset] = useQueryParam('offset', '0');
  const offset = Number(offsetText) || 0;
  const limit = 50;
  const list = useApi((signal) => api<List<Schedule>>('/osm/api/schedules', { query: { offset, limit }, signal }), [offset]);
  const [editing, setEditing] = useState<Draft | undefined>();
  const [removing, setRemoving] = useState<Schedule | undefined>();
  const [note, setNote] = useState('');
  const [error, setError] = useState<Error | undefined>();
  const operator = can('operator');
  const act = async (fn: () => Promise<unknown>) => {
    setError(undefined);
    setNote('');
    try {
      await fn();
      list.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <section>
      <PageHead title="Schedules">
        {operator && !editing && (
          <button type="button" class="btn primary" onClick={() => setEditing({ ...EMPTY })}>
            New schedule
          </button>
        )}
      </PageHead>
      {editing && (
        <ScheduleForm
          key={editing.id ?? 'new'}
          initial={editing}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            list.reload();
          }}
        />
      )}
      {note && (
        <p class="notice" role="status">
          {note}
        </p>
      )}
      {error && <ErrorBox error={error} />}
      <ConfirmDialog
        open={Boolean(removing)}
        title="Delete this schedule?"
        confirmLabel="Delete"
        danger
        onCancel={() => setRemoving(undefined)}
        onConfirm={() =>
          void act(async () => {
            await api(`/osm/api/schedules/${seg(removing!.id)}`, { method: 'DELETE' });
            setRemoving(undefined);
          })
        }
      >
        <p>The schedule {removing?.name} stops launching runs. Runs it already started are kept.</p>
      </ConfirmDialog>
      <Loaded data={list.data} error={list.error} loading={list.loading} retry={list.reload} empty={(d) => d.data.length === 0} emptyText="No schedules yet.">
        {(d) => (
          <>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Workflow</th>
                    <th>Trigger</th>
                    <th>Target</th>
                    <th>State</th>
                    <th>Last run</th>
                    <th>Next run</th>
                    <th>Runs</th>
                    {operator && (
                      <th>
                        <span class="sr-only">Actions</span>
                      </th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {d.data.map((s) => (
                    <tr key={s.id}>
                      <td>{s.name}</td>
                      <td>
                        <a href={`/workflows/${seg(s.workflow_name)}`}>{s.workflow_name}</a>
                      </td>
                      <td class="mono">{s.event_topic ? `event ${s.event_topic}` : s.watch_path ? `watch ${s.watch_path}` : s.schedule ? `cron ${s.schedule}` : s.trigger_type}</td>
                      <td class="wrap">{String(s.input_config?.target ?? '')}</td>
                      <td>
                        <Status value={s.is_enabled ? 'enabled' : 'disabled'} />
                      </td>
                      <td>
                        <Time value={s.last_run} />
                      </td>
                      <td>
                        <Time value={s.next_run} />
                      </td>
                      <td>{s.run_count}</td>
                      {operator && (
                        <td class="nowrap">
                          <button type="button" class="btn small" onClick={() => void act(() => api(`/osm/api/schedules/${seg(s.id)}/${s.is_enabled ? 'disable' : 'enable'}`, { method: 'POST' }))}>
                            {s.is_enabled ? 'Disable' : 'Enable'}
                          </button>{' '}
                          <button
                            type="button"
                            class="btn small"
                            onClick={() =>
                              void act(async () => {
                                const r = await api<{ message: string }>(`/osm/api/schedules/${seg(s.id)}/trigger`, { method: 'POST' });
                                setNote(r.message);
                              })
                            }
                          >
                            Trigger now
                          </button>{' '}
                          <button type="button" class="btn small" onClick={() => setEditing(draftOf(s))}>
                            Edit
                          </button>{' '}
                          <button type="button" class="btn small danger" onClick={() => setRemoving(s)}>
                            Delete
                          </button>
                        </td>
                      )}
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
