/** Overview: counts by status and severity, runs and new findings per day, recent runs. */
import { api, type List } from '../lib/api.js';
import { useApi, useInterval } from '../lib/use-api.js';
import { useLive } from '../lib/live.js';
import { count, dayKey, parseTime } from '../lib/format.js';
import { Count, SEVERITIES } from '../components/bits.js';
import { Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import { BarChart } from '../components/bar-chart.js';
import { RunTable } from './run-table.js';
import type { Run, Stats, Vuln } from '../types.js';

const DAYS = 14;

function lastDays(n: number): string[] {
  const out: string[] = [];
  const d = new Date();
  d.setHours(12, 0, 0, 0);
  for (let i = n - 1; i >= 0; i--) out.push(dayKey(new Date(d.getTime() - i * 86400_000)));
  return out;
}

function perDay<T>(rows: T[], days: string[], when: (r: T) => string | null | undefined, pick: (r: T) => boolean = () => true): number[] {
  const idx = new Map(days.map((d, i) => [d, i]));
  const out = days.map(() => 0);
  for (const r of rows) {
    const t = parseTime(when(r));
    if (!t || !pick(r)) continue;
    const i = idx.get(dayKey(t));
    if (i !== undefined) out[i]! += 1;
  }
  return out;
}

export function OverviewPage() {
  const stats = useApi((signal) => api<Stats>('/osm/api/stats', { signal }), []);
  const recent = useApi((signal) => api<List<Run>>('/osm/api/runs', { query: { limit: 8 }, signal }), []);
  // The charts read the newest rows (enough for two weeks of a busy server); counts come from /stats.
  const history = useApi(
    async (signal) => {
      const [runs, vulns] = await Promise.all([api<List<Run>>('/osm/api/runs', { query: { limit: 1000 }, signal }), api<List<Vuln>>('/osm/api/vulnerabilities', { query: { limit: 2000 }, signal })]);
      return { runs: runs.data, vulns: vulns.data };
    },
    [],
  );
  const reload = () => {
    stats.reload();
    recent.reload();
  };
  const mode = useLive((c) => {
    if (c.kind === 'run') reload();
  });
  useInterval(reload, 5000, mode !== 'live');
  const days = lastDays(DAYS);
  return (
    <section>
      <PageHead title="Overview">
        <a class="btn primary" href="/runs/new">
          New run
        </a>
      </PageHead>
      <Loaded data={stats.data} error={stats.error} loading={stats.loading} retry={stats.reload}>
        {(s) => (
          <div class="cards">
            <div class="card">
              <h2>Runs</h2>
              <Count label="Total" value={count(s.runs.total)} href="/runs" />
              {['running', 'queued', 'pending', 'completed', 'failed', 'cancelled'].map((st) => (s.runs[st] !== undefined ? <Count label={st} value={count(s.runs[st])} href={`/runs?status=${st}`} /> : null))}
            </div>
            <div class="card">
              <h2>Inventory</h2>
              <Count label="Workspaces" value={count(s.workspaces.total)} href="/workspaces" />
              <Count label="Assets" value={count(s.assets.total)} href="/assets" />
              <Count label="Workflows" value={count(s.workflows.total)} href="/workflows" />
              <Count label="Schedules" value={`${count(s.schedules.total)} (${count(s.schedules.enabled)} enabled)`} href="/schedules" />
            </div>
            <div class="card">
              <h2>Vulnerabilities</h2>
              <Count label="Total" value={count(s.vulnerabilities.total)} href="/vulnerabilities" />
              {SEVERITIES.map((sev) => (
                <Count label={sev} value={count(s.vulnerabilities[sev] ?? 0)} href={`/vulnerabilities?severity=${sev}`} />
              ))}
            </div>
          </div>
        )}
      </Loaded>
      <div class="charts">
        <Loaded data={history.data} error={history.error} loading={history.loading} retry={history.reload}>
          {(h) => (
            <>
              <BarChart
                title={`Runs per day (last ${DAYS} days)`}
                days={days}
                series={[
                  { name: 'completed', cls: 'c-ok', values: perDay(h.runs, days, (r) => r.created_at, (r) => r.status === 'completed') },
                  { name: 'failed', cls: 'c-bad', values: perDay(h.runs, days, (r) => r.created_at, (r) => r.status === 'failed') },
                  { name: 'other', cls: 'c-muted', values: perDay(h.runs, days, (r) => r.created_at, (r) => r.status !== 'completed' && r.status !== 'failed') },
                ]}
              />
              <BarChart
                title={`New findings per day (last ${DAYS} days)`}
                days={days}
                series={[
                  { name: 'critical / high', cls: 'c-bad', values: perDay(h.vulns, days, (v) => v.created_at, (v) => v.severity === 'critical' || v.severity === 'high') },
                  { name: 'medium', cls: 'c-warn', values: perDay(h.vulns, days, (v) => v.created_at, (v) => v.severity === 'medium') },
                  { name: 'low / info', cls: 'c-muted', values: perDay(h.vulns, days, (v) => v.created_at, (v) => v.severity !== 'critical' && v.severity !== 'high' && v.severity !== 'medium') },
                ]}
              />
            </>
          )}
        </Loaded>
      </div>
      <h2>Recent runs</h2>
      <Loaded data={recent.data} error={recent.error} loading={recent.loading} retry={recent.reload} empty={(d) => d.data.length === 0} emptyText={<>No runs yet. <a href="/runs/new">Start one</a>.</>}>
        {(d) => <RunTable runs={d.data} />}
      </Loaded>
    </section>
  );
}
