/** Workers (distributed mode): online/offline, current task, and the queue's depth. */
import { api, ApiError } from '../lib/api.js';
import { useApi, useInterval } from '../lib/use-api.js';
import { seg } from '../lib/router.js';
import { Status, Time } from '../components/bits.js';
import { Empty, ErrorBox, Loading } from '../components/states.js';
import { PageHead } from '../components/layout.js';

interface Worker {
  id: string;
  hostname: string;
  status: string;
  current_task: string | null;
  current_tasks: string[];
  concurrency: number;
  joined_at: string;
  last_heartbeat: string;
  tasks_complete: number;
  tasks_failed: number;
}

interface Task {
  id?: string;
  run_uuid?: string;
  workflow?: string;
  target?: string;
  state?: string;
}

interface Tasks {
  running: Task[];
  waiting: Task[];
  completed: Task[];
  failed: Task[];
}

export function WorkersPage() {
  const workers = useApi((signal) => api<{ data: Worker[] }>('/osm/api/workers', { signal }), []);
  const tasks = useApi((signal) => api<Tasks>('/osm/api/tasks', { query: { limit: 100 }, signal }), []);
  const notMaster = workers.error instanceof ApiError && workers.error.status === 400;
  useInterval(
    () => {
      workers.reload();
      tasks.reload();
    },
    5000,
    !notMaster,
  );
  return (
    <section>
      <PageHead title="Workers" />
      {notMaster ? (
        <Empty>
          This server runs workflows itself: it is not a distributed master. Start it with <code>osm serve --master</code> and join workers with <code>osm worker join</code> to see them here.
        </Empty>
      ) : workers.error && !workers.data ? (
        <ErrorBox error={workers.error} retry={workers.reload} />
      ) : !workers.data ? (
        <Loading />
      ) : (
        <>
          <p class="counts">
            <span>Workers {workers.data.data.length}</span> <span>Online {workers.data.data.filter((w) => w.status !== 'offline').length}</span>{' '}
            <span>Queue depth {tasks.data ? `${tasks.data.waiting.length}${tasks.data.waiting.length >= 100 ? '+' : ''}` : '—'}</span> <span>Running tasks {tasks.data?.running.length ?? '—'}</span>
          </p>
          {workers.data.data.length === 0 ? (
            <Empty>No worker has joined yet.</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Worker</th>
                    <th>State</th>
                    <th>Current task</th>
                    <th>Concurrency</th>
                    <th>Done</th>
                    <th>Failed</th>
                    <th>Last heartbeat</th>
                    <th>Joined</th>
                  </tr>
                </thead>
                <tbody>
                  {workers.data.data.map((w) => (
                    <tr key={w.id}>
                      <td>
                        {w.id}
                        <div class="muted small">{w.hostname}</div>
                      </td>
                      <td>
                        <Status value={w.status} />
                      </td>
                      <td>{w.current_task ? <a href={`/runs/${seg(w.current_task)}`}>{w.current_task}</a> : '—'}{w.current_tasks.length > 1 ? ` (+${w.current_tasks.length - 1})` : ''}</td>
                      <td>{w.concurrency}</td>
                      <td>{w.tasks_complete}</td>
                      <td>{w.tasks_failed}</td>
                      <td>
                        <Time value={w.last_heartbeat} />
                      </td>
                      <td>
                        <Time value={w.joined_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
