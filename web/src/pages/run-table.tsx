/** The runs table (Runs page, Overview, a workspace): the target opens the run. */
import { Status, Time } from '../components/bits.js';
import { duration, between } from '../lib/format.js';
import { seg } from '../lib/router.js';
import type { Run } from '../types.js';

export function Progress({ done, total }: { done: number; total: number }) {
  const pct = total > 0 ? Math.round((100 * done) / total) : 0;
  return (
    <span class="progress" title={`${done} of ${total} steps`}>
      <progress max={Math.max(total, 1)} value={done} aria-label={`${done} of ${total} steps`} />
      <span class="small">
        {done}/{total}
        <span class="sr-only"> steps ({pct}%)</span>
      </span>
    </span>
  );
}

export function RunTable({ runs }: { runs: Run[] }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>Target</th>
            <th>Workflow</th>
            <th>Status</th>
            <th>Steps</th>
            <th>Started</th>
            <th>Duration</th>
            <th>Workspace</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.run_uuid}>
              <td class="wrap">
                <a href={`/runs/${seg(r.run_uuid)}`}>{r.target || '(no target)'}</a>
              </td>
              <td>
                <a href={`/workflows/${seg(r.workflow_name)}`}>{r.workflow_name}</a> <span class="muted small">{r.workflow_kind}</span>
              </td>
              <td>
                <Status value={r.status} />
              </td>
              <td>
                <Progress done={r.completed_steps} total={r.total_steps} />
              </td>
              <td>
                <Time value={r.started_at ?? r.created_at} />
              </td>
              <td>{r.started_at ? duration(between(r.started_at, r.completed_at)) : '—'}</td>
              <td>{r.workspace ? <a href={`/workspaces/${seg(r.workspace)}`}>{r.workspace}</a> : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
