/**
 * One run: what it is (params, timing), its steps as a timeline, its live log, its artifacts, and
 * the actions Cancel (confirmed), Resume and Duplicate.
 */
import { useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { can } from '../lib/auth.js';
import { useApi } from '../lib/use-api.js';
import { useLive } from '../lib/live.js';
import { useRunLog } from '../lib/run-log.js';
import { between, duration } from '../lib/format.js';
import { navigate, seg } from '../lib/router.js';
import { Status, Time } from '../components/bits.js';
import { ConfirmDialog } from '../components/dialog.js';
import { ErrorBox, Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import { LogView } from '../components/log-view.js';
import { Progress } from './run-table.js';
import { ArtifactList } from './artifacts.js';
import type { Artifact, Run, Step } from '../types.js';

const ACTIVE = new Set(['queued', 'pending', 'running']);

function Timeline({ steps, run }: { steps: Step[]; run: Run }) {
  const t0 = Date.parse(run.started_at ?? run.created_at);
  const end = Math.max(...steps.map((s) => Date.parse(s.completed_at ?? '') || Date.now()), t0 + 1);
  const span = Math.max(1, end - t0);
  return (
    <ol class="timeline" aria-label="Steps">
      {steps.map((s) => {
        const start = Date.parse(s.started_at ?? '') || t0;
        const ms = s.duration_ms || (s.started_at ? between(s.started_at, s.completed_at) ?? 0 : 0);
        const left = Math.max(0, Math.min(100, ((start - t0) / span) * 100));
        const width = Math.max(0.8, Math.min(100 - left, (ms / span) * 100));
        return (
          <li class={`tl-step tl-${s.status}`}>
            <span class="tl-name">{s.step_name}</span>
            <Status value={s.status} />
            <span class="tl-meta">
              {s.step_type} · {duration(ms)}
              {s.exit_code !== undefined && s.exit_code !== null ? ` · exit ${s.exit_code}` : ''}
            </span>
            <span class="tl-track" aria-hidden="true">
              <span class="tl-bar" style={{ left: `${left}%`, width: `${width}%` }} />
            </span>
            {s.error_message && <span class="tl-error">{s.error_message.split('\n')[0]}</span>}
          </li>
        );
      })}
    </ol>
  );
}

export function RunPage({ id }: { id: string }) {
  const run = useApi((signal) => api<{ data: Run }>(`/osm/api/runs/${seg(id)}`, { signal }), [id]);
  const steps = useApi((signal) => api<{ data: Step[] }>(`/osm/api/runs/${seg(id)}/steps`, { signal }), [id]);
  const artifacts = useApi((signal) => api<{ data: Artifact[] }>(`/osm/api/runs/${seg(id)}/artifacts`, { signal }), [id]);
  const [confirm, setConfirm] = useState(false);
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<Error | undefined>();
  const [message, setMessage] = useState('');

  const refresh = () => {
    run.reload();
    steps.reload();
  };
  const { buffer, mode } = useRunLog(id, {
    onStep: () => refresh(),
    onEnd: () => {
      refresh();
      artifacts.reload();
    },
  });
  useLive((c) => {
    const r = run.data?.data;
    if (r && c.run_uuid === r.run_uuid) refresh();
  });

  const act = async (what: () => Promise<void>) => {
    setBusy(true);
    setActionError(undefined);
    try {
      await what();
    } catch (err) {
      setActionError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  const cancel = () =>
    act(async () => {
      const r = await api<{ message: string }>(`/osm/api/runs/${seg(id)}/cancel`, { method: 'POST' });
      setConfirm(false);
      setMessage(r.message);
      refresh();
    });
  const resume = () =>
    act(async () => {
      const r = await api<{ run_uuid: string }>(`/osm/api/runs/${seg(id)}/resume`, { method: 'POST' });
      navigate(`/runs/${seg(r.run_uuid)}`);
    });
  const duplicate = () =>
    act(async () => {
      const r = await api<{ run_uuid?: string; new_run_uuid?: string }>(`/osm/api/runs/${seg(id)}/duplicate`, { method: 'POST' });
      const copy = r.run_uuid ?? r.new_run_uuid;
      if (!copy) throw new Error('The server did not say which run it created');
      await api(`/osm/api/runs/${seg(copy)}/start`, { method: 'POST' });
      navigate(`/runs/${seg(copy)}`);
    });

  return (
    <Loaded data={run.data} error={run.error} loading={run.loading} retry={run.reload}>
      {({ data: r }) => (
        <section>
          <PageHead
            title={
              <>
                {r.target || '(no target)'} <Status value={r.status} />
              </>
            }
          >
            {can('operator') && ACTIVE.has(r.status) && (
              <button type="button" class="btn danger" onClick={() => setConfirm(true)} disabled={busy}>
                Cancel
              </button>
            )}
            {can('operator') && (r.status === 'failed' || r.status === 'cancelled') && (
              <button type="button" class="btn" onClick={() => void resume()} disabled={busy}>
                Resume
              </button>
            )}
            {can('operator') && (
              <button type="button" class="btn" onClick={() => void duplicate()} disabled={busy}>
                Duplicate
              </button>
            )}
          </PageHead>
          {message && (
            <p class="notice" role="status">
              {message}
            </p>
          )}
          {actionError && <ErrorBox error={actionError} />}
          <ConfirmDialog open={confirm} title="Cancel this run?" confirmLabel="Cancel run" danger busy={busy} onConfirm={() => void cancel()} onCancel={() => setConfirm(false)}>
            <p>
              The run of <b>{r.workflow_name}</b> on <b>{r.target}</b> stops now and its running processes are killed. It can be resumed later.
            </p>
          </ConfirmDialog>
          <dl class="facts">
            <dt>Workflow</dt>
            <dd>
              <a href={`/workflows/${seg(r.workflow_name)}`}>{r.workflow_name}</a> ({r.workflow_kind})
            </dd>
            <dt>Workspace</dt>
            <dd>{r.workspace ? <a href={`/workspaces/${seg(r.workspace)}`}>{r.workspace}</a> : '—'}</dd>
            <dt>Progress</dt>
            <dd>
              <Progress done={r.completed_steps} total={r.total_steps} />
              {r.current_step ? <span class="muted small"> running {r.current_step}</span> : null}
            </dd>
            <dt>Created</dt>
            <dd>
              <Time value={r.created_at} />
            </dd>
            <dt>Started</dt>
            <dd>
              <Time value={r.started_at} />
            </dd>
            <dt>Finished</dt>
            <dd>
              <Time value={r.completed_at} />
            </dd>
            <dt>Duration</dt>
            <dd>{r.started_at ? duration(between(r.started_at, r.completed_at)) : '—'}</dd>
            <dt>Trigger</dt>
            <dd>
              {r.trigger_type || 'manual'}
              {r.trigger_name ? ` (${r.trigger_name})` : ''}
            </dd>
            <dt>Priority</dt>
            <dd>{r.priority ?? 'normal'}</dd>
            <dt>Run id</dt>
            <dd class="mono small">{r.run_uuid}</dd>
            {r.error_message && (
              <>
                <dt>Error</dt>
                <dd class="error-text">{r.error_message}</dd>
              </>
            )}
          </dl>
          {Object.keys(r.params ?? {}).length > 0 && (
            <details>
              <summary>Parameters ({Object.keys(r.params).length})</summary>
              <dl class="facts">
                {Object.entries(r.params).map(([k, v]) => (
                  <>
                    <dt>{k}</dt>
                    <dd class="mono">{v}</dd>
                  </>
                ))}
              </dl>
            </details>
          )}
          <h2>Steps</h2>
          <Loaded data={steps.data} error={steps.error} loading={steps.loading} retry={steps.reload} empty={(d) => d.data.length === 0} emptyText={ACTIVE.has(r.status) ? 'No step has started yet.' : 'This run recorded no steps.'}>
            {(d) => <Timeline steps={d.data} run={r} />}
          </Loaded>
          <h2>Log</h2>
          <LogView buffer={buffer} steps={(steps.data?.data ?? []).map((s) => s.step_name)} fileName={`${r.workflow_name}-${r.run_uuid}.log`} live={mode === 'live' || (mode === 'polling' && ACTIVE.has(r.status))} />
          {mode === 'polling' && <p class="muted small">This server has no live log stream: step output appears when each step finishes.</p>}
          <h2>Artifacts</h2>
          <Loaded data={artifacts.data} error={artifacts.error} loading={artifacts.loading} retry={artifacts.reload} empty={(d) => d.data.length === 0} emptyText="No artifacts yet.">
            {(d) => <ArtifactList artifacts={d.data} />}
          </Loaded>
        </section>
      )}
    </Loaded>
  );
}
