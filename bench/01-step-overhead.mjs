/**
 * Benchmark 1 — step overhead: a module of 1,000 sequential bash steps running `true` through
 * `osm run`, against a plain Node loop that spawns `true` 1,000 times (same machine, same run).
 * Engine overhead per step = (run duration − loop duration) / steps, both measured without their
 * process start-up (the whole `osm run` process is reported too). A second baseline spawns `/bin/bash -c true`, because every
 * bash step goes through a shell: the difference between the two is the shell, not the engine.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { median, osm, round, runTimed, scaled, tempDir } from './lib/common.mjs';

export const meta = { id: 1, name: 'step-overhead', title: 'Step overhead (1,000 sequential bash steps)' };

const SPAWN_LOOP = path.join(path.dirname(new URL(import.meta.url).pathname), 'lib', 'spawn-loop.mjs');

/** A module of `n` sequential bash steps, each `true`. */
function stepsModule(name, n) {
  let yaml = `kind: module\nname: ${name}\ndescription: benchmark — ${n} sequential true steps\nsteps:\n`;
  for (let i = 0; i < n; i++) yaml += `  - name: s${i}\n    type: bash\n    command: "true"\n`;
  return yaml;
}

/** Runs the benchmark; returns table rows and details for the JSON result. */
export async function run({ log }) {
  const steps = scaled(1000, 20);
  const reps = 3;
  const { dir, cleanup } = tempDir();
  try {
    const base = path.join(dir, 'base');
    const wf = path.join(dir, 'workflows');
    mkdirSync(path.join(wf, 'modules'), { recursive: true });
    writeFileSync(path.join(wf, 'modules', 'bench-steps.yaml'), stepsModule('bench-steps', steps));
    writeFileSync(path.join(wf, 'modules', 'bench-warm.yaml'), stepsModule('bench-warm', 5));
    // First use creates the settings file and the database: not part of the figure.
    await osm(['-b', base, '-F', wf, 'run', '-m', 'bench-warm', '-t', 'warm.example.com', '--json']);

    const engine = [];
    const engineInside = [];
    const baseTrue = [];
    const baseBash = [];
    let rss = 0;
    for (let r = 0; r < reps; r++) {
      const t = await runTimed(process.execPath, [SPAWN_LOOP, String(steps), 'true']);
      baseTrue.push({ wall: t.ms, inside: JSON.parse(t.stdout).ms });
      const b = await runTimed(process.execPath, [SPAWN_LOOP, String(steps), '/bin/bash', '-c', 'true']);
      baseBash.push({ wall: b.ms, inside: JSON.parse(b.stdout).ms });
      const e = await osm(['-b', base, '-F', wf, 'run', '-m', 'bench-steps', '-t', `rep${r}.example.com`, '--json']);
      // --json prints event lines, then the run record as the last line.
      const out = JSON.parse(e.stdout.trim().split('\n').at(-1));
      const runRec = out.run ?? out.runs?.[0]?.run ?? out;
      if (runRec.status !== 'completed' || runRec.completed_steps !== steps) {
        throw new Error(`osm run did not complete all ${steps} steps: status ${runRec.status}, ${runRec.completed_steps} steps`);
      }
      engine.push(e.ms);
      engineInside.push(Date.parse(runRec.completed_at) - Date.parse(runRec.started_at));
      rss = Math.max(rss, e.maxRssKb ?? 0);
      log(`  rep ${r + 1}/${reps}: osm run ${Math.round(e.ms)} ms (run row ${engineInside.at(-1)} ms), spawn true ${Math.round(baseTrue.at(-1).inside)} ms, bash -c true ${Math.round(baseBash.at(-1).inside)} ms`);
    }
    // Per-step figures compare like with like: the run row's started→completed span (the steps,
    // without the CLI's start-up) against the loop's own timing (without Node's start-up).
    const inside = median(engineInside);
    const bt = median(baseTrue.map((x) => x.inside));
    const bb = median(baseBash.map((x) => x.inside));
    const wall = median(engine);
    const wallTrue = median(baseTrue.map((x) => x.wall));
    const overhead = (inside - bt) / steps;
    const overheadVsShell = (inside - bb) / steps;
    const rows = [
      {
        metric: 'engine overhead per step',
        figure: round(overhead, 2),
        unit: 'ms/step',
        baseline: round(bt / steps, 2),
        baselineLabel: 'ms/step, loop spawning true',
        ratio: round(inside / bt, 2),
        target: '≤ 2 ms/step',
        met: overhead <= 2,
      },
      {
        metric: 'overhead per step beyond bash -c',
        figure: round(overheadVsShell, 2),
        unit: 'ms/step',
        baseline: round(bb / steps, 2),
        baselineLabel: 'ms/step, loop spawning bash -c true',
        ratio: round(inside / bb, 2),
        target: '(info)',
        met: null,
      },
      {
        metric: 'whole osm run process (incl. start-up)',
        figure: round(wall / 1000, 2),
        unit: 's',
        baseline: round(wallTrue / 1000, 2),
        baselineLabel: 's, node loop process',
        ratio: round(wall / wallTrue, 2),
        target: '(info)',
        met: null,
      },
    ];
    return {
      rows,
      details: {
        steps,
        repetitions: reps,
        method:
          'overhead = (median run duration from the run row − median loop time measured inside the loop process) / steps; repetitions interleave engine and baselines',
        osm_run_wall_ms: engine.map((n) => round(n, 1)),
        osm_run_row_duration_ms: engineInside,
        spawn_true_loop_ms: baseTrue.map((x) => round(x.inside, 1)),
        spawn_true_process_wall_ms: baseTrue.map((x) => round(x.wall, 1)),
        spawn_bash_loop_ms: baseBash.map((x) => round(x.inside, 1)),
        osm_run_peak_rss_mb: round(rss / 1024, 1),
        per_step_ms: { osm: round(inside / steps, 3), spawn_true: round(bt / steps, 3), spawn_bash: round(bb / steps, 3) },
      },
    };
  } finally {
    cleanup();
  }
}
