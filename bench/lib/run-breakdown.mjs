/**
 * Where a run's time beyond its steps' own work goes, from the rows the daemon wrote (runs and
 * step_results; millisecond timestamps): the spawn-to-exit overhead of each step (its duration
 * minus the work it was given), the gap between a step's end and the next step's start, a run's
 * start to its first step, its last step to its end, and — chaining runs the way the queue's
 * slots do — a run's end to the start of the next run in the same slot. Means and medians in ms.
 */
const t = (iso) => Date.parse(iso);

function stats(values) {
  const a = values.slice().sort((x, y) => x - y);
  if (a.length === 0) return { n: 0 };
  const mean = a.reduce((s, x) => s + x, 0) / a.length;
  return { n: a.length, mean: Math.round(mean * 10) / 10, median: a[Math.floor(a.length / 2)], p90: a[Math.floor(a.length * 0.9)] };
}

/**
 * `runs`: { run_uuid, started_at, completed_at }; `steps`: { run_uuid, step_index, started_at, completed_at };
 * `workMs`: the work of one step (its sleep).
 */
export function runBreakdown(runs, steps, workMs) {
  const byRun = new Map();
  for (const s of steps) {
    if (!byRun.has(s.run_uuid)) byRun.set(s.run_uuid, []);
    byRun.get(s.run_uuid).push(s);
  }
  const stepOver = [];
  const gaps = [];
  const toFirst = [];
  const fromLast = [];
  // The first wave: runs started together when the jobs arrived (within 100 ms of the first).
  const firstStart = Math.min(...runs.map((r) => t(r.started_at)));
  const firstWave = [];
  for (const r of runs) {
    const ss = (byRun.get(r.run_uuid) ?? []).sort((a, b) => Number(a.step_index) - Number(b.step_index));
    ss.forEach((s, i) => {
      stepOver.push(t(s.completed_at) - t(s.started_at) - workMs);
      if (i > 0) gaps.push(t(s.started_at) - t(ss[i - 1].completed_at));
    });
    if (ss.length > 0) {
      toFirst.push(t(ss[0].started_at) - t(r.started_at));
      if (t(r.started_at) - firstStart <= 100) firstWave.push(t(ss[0].started_at) - t(r.started_at));
      fromLast.push(t(r.completed_at) - t(ss.at(-1).completed_at));
    }
  }
  // Slots: each run follows the run that ended last before it started (greedy, as a freed slot is refilled).
  const ends = [];
  const between = [];
  for (const [s, e] of runs.map((r) => [t(r.started_at), t(r.completed_at)]).sort((a, b) => a[0] - b[0])) {
    let best = -1;
    for (let i = 0; i < ends.length; i++) if (ends[i] <= s && (best < 0 || ends[i] > ends[best])) best = i;
    if (best >= 0) {
      between.push(s - ends[best]);
      ends.splice(best, 1);
    }
    ends.push(e);
  }
  return {
    step_overhead_ms: stats(stepOver),
    step_gap_ms: stats(gaps),
    run_start_to_first_step_ms: stats(toFirst),
    first_wave_start_to_first_step_ms: stats(firstWave),
    last_step_to_run_end_ms: stats(fromLast),
    run_end_to_next_start_ms: stats(between),
  };
}

/** One line for the log. */
export function describeBreakdown(b) {
  const f = (s) => `${s.mean} (median ${s.median})`;
  return `per run, mean ms: start→1st step ${f(b.run_start_to_first_step_ms)} (first wave of ${b.first_wave_start_to_first_step_ms.n}: ${f(b.first_wave_start_to_first_step_ms)}), step overhead ${f(b.step_overhead_ms)}, step gap ${f(b.step_gap_ms)}, last step→end ${f(b.last_step_to_run_end_ms)}, end→next run ${f(b.run_end_to_next_start_ms)}`;
}
