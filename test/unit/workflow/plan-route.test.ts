import { describe, expect, it } from 'vitest';
import { buildPlan, formatPlan, type Plan, type PlanInput, type PlanRouteEntry } from '../../../src/workflow/plan.js';
import { routeDecision, staticConditionProblem, UnevaluableCondition } from '../../../src/workflow/decision-route.js';
import { dryRunConditionEvaluator } from '../../../src/engine/decision.js';
import type { Step, Workflow } from '../../../src/workflow/types.js';
import { wf } from '../../helpers/workflow.js';


const vars = { Target: 'example.com', target: 'example.com', Output: '/ws/example.com', Workspace: 'example.com', mode: 'fast', enable_extra: false, api_token: 's3cr3t-value' };
const input: PlanInput = { target: 'example.com', vars, evaluateCondition: dryRunConditionEvaluator() };
const echo = (name: string, extra: Partial<Step> = {}): Step => ({ name, type: 'bash', command: `echo ${name}`, ...extra });
const plan = (steps: Step[], over: Partial<PlanInput> = {}) => buildPlan(wf({ kind: 'module', name: 'routed', steps }), { ...input, ...over });

/** The route as compact strings: `name` visited, `name#2` second visit, `-name` not reached, `!` stopped. */
function route(p: Plan): string[] {
  return (p.route?.entries ?? []).map((e: PlanRouteEntry) => (e.kind === 'stopped' ? '!' : e.kind === 'not-reached' ? `-${e.name}` : e.visit > 1 ? `${e.name}#${e.visit}` : e.name));
}

function visit(p: Plan, name: string) {
  const e = p.route!.entries.find((x) => x.kind === 'step' && x.name === name);
  if (!e || e.kind !== 'step') throw new Error(`${name} not visited`);
  return e;
}

describe('dry-run plan follows decisions', () => {
  it('switch: the matching case runs its inline work and jumps; jumped-over steps are not reached', () => {
    const p = plan([
      echo('detect', { decision: { switch: '{{mode}}', cases: { fast: { command: 'echo going {{mode}} on {{Target}}', goto: 'quick' }, deep: { goto: 'deep' } }, default: { goto: 'generic' } } }),
      echo('deep'),
      echo('generic'),
      echo('quick'),
      echo('report'),
    ]);
    expect(route(p)).toEqual(['detect', '-deep', '-generic', 'quick', 'report']);
    const d = visit(p, 'detect').decision!;
    expect(d.switch).toMatchObject({ value: 'fast', matched: 'case', goto: 'quick' });
    expect(d.switch!.inline).toMatchObject([{ name: 'decision-inline-bash', type: 'bash', commands: ['echo going fast on example.com'] }]);
    expect(d).toMatchObject({ goto: 'quick', gotoTarget: 'step' });
    expect(p.steps[1]!.notReached).toBe("decision goto quick at step 'detect'");
    expect(p.steps[3]!.notReached).toBeUndefined();
    expect(p.route!.reached).toBe(3);

    const text = formatPlan(p);
    expect(text).toContain('DRY-RUN');
    expect(text).toContain('Route:       3 of 5 steps reached');
    expect(text).toContain('⤷ switch "fast" → case "fast" → goto quick');
    expect(text).toContain('▶ Inline: decision-inline-bash (bash)');
    expect(text).toContain("◌ Step 2: deep (not reached: decision goto quick at step 'detect')");
    expect(text).toContain("◌ Step 3: generic (not reached: decision goto quick at step 'detect')");
    expect(text.indexOf('Step 3: generic')).toBeLessThan(text.indexOf('Step 4: quick'));
  });

  it('switch: exports count as "true", so an export-driven switch takes the default (routing may differ from a run)', () => {
    const p = plan([
      echo('router', { exports: { route: '{{mode}}' }, decision: { switch: '{{route}}', cases: { fast: { goto: 'fast-path' } }, default: { function: 'log_info("{{route}}")', goto: 'slow-path' } } }),
      echo('fast-path'),
      echo('slow-path'),
    ]);
    const d = visit(p, 'router').decision!;
    expect(d.switch).toMatchObject({ value: 'true', matched: 'default', goto: 'slow-path' });
    expect(d.switch!.inline).toMatchObject([{ name: 'decision-inline-function', type: 'function', commands: ['log_info("{{route}}")'], renderedAt: 'runtime' }]);
    expect(route(p)).toEqual(['router', '-fast-path', 'slow-path']);
    expect(formatPlan(p)).toContain('⤷ switch "true" → default → goto slow-path');
  });

  it('switch without a matching case or default: nothing happens, the next step follows', () => {
    const p = plan([echo('a', { decision: { switch: 'zzz', cases: { x: { goto: 'c' } } } }), echo('b'), echo('c')]);
    expect(route(p)).toEqual(['a', 'b', 'c']);
    expect(visit(p, 'a').decision).toMatchObject({ switch: { value: 'zzz', matched: 'none', inline: [] }, conditions: [] });
    expect(visit(p, 'a').decision!.goto).toBeUndefined();
  });

  it('conditions: every truthy entry runs its inline work, the last truthy goto wins over the switch', () => {
    const p = plan([
      echo('check', {
        exports: { found: 'file_length("x")' },
        decision: {
          switch: '{{mode}}',
          cases: { fast: { goto: 'by-switch' } },
          conditions: [
            { if: '{{found}} == true', command: 'echo first', goto: 'by-first' },
            { if: "'{{mode}}' == 'slow'", goto: 'by-false' },
            { if: '!{{enable_extra}} && "{{Target}}".endsWith(".com")', commands: ['echo second-a', 'echo second-b'], goto: 'by-last' },
            { if: "'{{mode}}' == 'fast'", command: 'echo no-goto' },
          ],
        },
      }),
      echo('by-switch'),
      echo('by-first'),
      echo('by-false'),
      echo('by-last'),
    ]);
    const d = visit(p, 'check').decision!;
    expect(d.conditions.map((c) => c.result)).toEqual([true, false, true, true]);
    expect(d.conditions.every((c) => c.unevaluated === undefined && c.error === undefined)).toBe(true);
    expect(d.conditions[0]!.inline.map((s) => s.name)).toEqual(['decision-condition-bash']);
    expect(d.conditions[1]!.inline).toEqual([]);
    expect(d.conditions[2]!.inline.map((s) => s.commands[0])).toEqual(['echo second-a', 'echo second-b']);
    expect(d.goto).toBe('by-last');
    expect(route(p)).toEqual(['check', '-by-switch', '-by-first', '-by-false', 'by-last']);
    const text = formatPlan(p);
    expect(text).toContain("⤷ if {{found}} == true → true → goto by-first");
    expect(text).toContain("⤷ if '{{mode}}' == 'slow' → false");
    expect(text).toContain('↪ goto by-last');
  });

  it('goto _end stops the module: the rest is not reached (post hooks are still listed)', () => {
    const p = buildPlan(
      wf({
        kind: 'module',
        name: 'ends',
        steps: [echo('a'), echo('stop', { decision: { conditions: [{ if: '{{enable_extra}} == false', command: 'echo bye', goto: '_end' }] } }), echo('after-1'), echo('after-2')],
        hooks: { pre_scan_steps: [], post_scan_steps: [echo('post-hook')] },
      }),
      input,
    );
    expect(route(p)).toEqual(['a', 'stop', '-after-1', '-after-2']);
    expect(visit(p, 'stop').decision).toMatchObject({ goto: '_end', gotoTarget: 'end' });
    expect(p.steps.map((s) => s.notReached)).toEqual([undefined, undefined, "decision goto _end at step 'stop'", "decision goto _end at step 'stop'"]);
    const text = formatPlan(p);
    expect(text).toContain('↪ goto _end (the module ends here)');
    expect(text).toContain("◌ Step 4: after-2 (not reached: decision goto _end at step 'stop')");
    expect(text).toContain('post-hook');
  });

  it('a backward goto loop is followed up to 3 visits per step, then the route stops and says so', () => {
    const p = plan([
      echo('start'),
      echo('poll', { exports: { ready: 'x' } }),
      echo('loop-back', { decision: { conditions: [{ if: '{{ready}} == true', goto: 'poll' }] } }),
      echo('done'),
    ]);
    expect(route(p)).toEqual(['start', 'poll', 'loop-back', 'poll#2', 'loop-back#2', 'poll#3', 'loop-back#3', '!', '-done']);
    expect(p.route!.stopped).toMatch(/step 'poll' would run a 4th time \(goto loop/);
    expect(p.steps[3]!.notReached).toBe('the route stopped at a goto loop first');
    const text = formatPlan(p);
    expect(text).toContain('▶ Step 2: poll (bash) again (visit 3)');
    expect(text).toContain("⟲ route stopped: step 'poll' would run a 4th time");
    expect(text).toContain('stopped at a goto loop');
    expect(text).toContain('◌ Step 4: done (not reached: the route stopped at a goto loop first)');
  });

  it('a backward goto that ends: a step jumped over first and reached later is on the route', () => {
    const p = plan([
      echo('a', { decision: { switch: '{{mode}}', cases: { fast: { goto: 'c' } } } }),
      echo('b', { decision: { switch: 'x', cases: { x: { goto: '_end' } } } }),
      echo('c', { decision: { switch: 'back', cases: { back: { goto: 'b' } } } }),
    ]);
    expect(route(p)).toEqual(['a', 'c', 'b']);
    expect(p.steps.every((s) => s.notReached === undefined)).toBe(true);
  });

  it('conditions that cannot be evaluated without running something count as false and are marked', () => {
    const p = plan([
      echo('check', {
        decision: {
          conditions: [
            { if: 'file_length("{{Output}}/live.txt") > 0', goto: 'by-fn' },
            { if: '{{later_var}} == "x"', goto: 'by-unknown' },
            { if: 'globalThis.exec_cmd("id")', goto: 'by-global' },
            { if: '{{mode}} ===', goto: 'by-error' },
          ],
        },
      }),
      echo('next'),
      echo('by-fn'),
    ]);
    const d = visit(p, 'check').decision!;
    expect(d.conditions.map((c) => c.result)).toEqual([false, false, false, false]);
    expect(d.conditions[0]!.unevaluated).toBe('calls file_length()');
    expect(d.conditions[1]!.unevaluated).toBe("reads 'later_var', which is not known before the run");
    expect(d.conditions[2]!.unevaluated).toBe("uses 'globalThis'");
    expect(d.conditions[3]!.error).toMatch(/SyntaxError/);
    expect(d.goto).toBeUndefined();
    expect(route(p)).toEqual(['check', 'next', 'by-fn']);
    const text = formatPlan(p);
    expect(text).toContain('⤷ if file_length("{{Output}}/live.txt") > 0 → false (not evaluated in a dry run: calls file_length(); counts as false)');
    expect(text).toMatch(/→ false \(evaluation error, counts as false: .*SyntaxError/);
  });

  it('without an evaluator every condition is unevaluated (and the switch still routes)', () => {
    const p = plan([echo('a', { decision: { switch: '{{mode}}', cases: { fast: { goto: 'c' } }, conditions: [{ if: 'true', goto: 'b' }] } }), echo('b'), echo('c')], { evaluateCondition: undefined });
    expect(visit(p, 'a').decision!.conditions[0]).toMatchObject({ result: false, unevaluated: 'no condition evaluator in this plan' });
    expect(route(p)).toEqual(['a', '-b', 'c']);
  });

  it('an unknown goto target continues with the next step, as a run does', () => {
    const p = plan([echo('a', { decision: { switch: 'x', cases: { x: { goto: 'ghost' } } } }), echo('b')]);
    expect(route(p)).toEqual(['a', 'b']);
    expect(visit(p, 'a').decision).toMatchObject({ goto: 'ghost', gotoTarget: 'unknown' });
    expect(formatPlan(p)).toContain('↪ goto ghost: no step has that name, the run continues with the next step');
  });

  it('masks secrets in a rendered switch value', () => {
    const p = plan([echo('a', { decision: { switch: '{{api_token}}', cases: {} } })]);
    expect(visit(p, 'a').decision!.switch!.value).toBe('[REDACTED]');
    expect(JSON.stringify(p)).not.toContain('s3cr3t-value');
  });

  it('modules without decisions and DAG modules keep the plain step list', () => {
    const plain = plan([echo('a'), echo('b')]);
    expect(plain.route).toBeUndefined();
    const dag = plan([echo('a', { decision: { switch: 'x', cases: { x: { goto: '_end' } } } }), echo('b', { depends_on: ['a'] })]);
    expect(dag.route).toBeUndefined();
    expect(dag.steps.every((s) => s.notReached === undefined)).toBe(true);
    const text = formatPlan(dag);
    expect(text).not.toContain('Route:');
    expect(text).toContain('▶ Step 2: b (bash)');
  });

  it('flow modules are routed too; route indexes count the module pre-scan hooks; earlier modules’ exports are "true"', () => {
    const first = wf({ kind: 'module', name: 'first', steps: [echo('produce', { exports: { has_live: 'x' } })] });
    const second = wf({
      kind: 'module',
      name: 'second',
      hooks: { pre_scan_steps: [echo('pre-hook')], post_scan_steps: [echo('post-hook')] },
      steps: [echo('gate', { decision: { conditions: [{ if: '{{has_live}}', goto: 'scan' }] } }), echo('skip-me'), echo('scan')],
    });
    const flow = wf({ kind: 'flow', name: 'f', modules: [{ name: 'first', path: 'first' }, { name: 'second', path: 'second', depends_on: ['first'] }] });
    const p = buildPlan(flow, input, (ref) => (ref.name === 'first' ? first : second));
    const mod = p.modules[1]!;
    expect(mod.route!.entries.map((e) => (e.kind === 'stopped' ? '!' : `${e.kind === 'not-reached' ? '-' : ''}${e.index}:${e.name}`))).toEqual(['1:gate', '-2:skip-me', '3:scan']);
    expect(mod.steps[2]!.notReached).toMatch(/decision goto scan/);
    expect(p.modules[0]!.route).toBeUndefined();
    const text = formatPlan(p);
    expect(text).toContain('route: 2 of 3 steps reached');
    expect(text).toContain('    ▶ Step 1: pre-hook (bash)');
    expect(text).toContain("    ◌ Step 3: skip-me (not reached: decision goto scan at step 'gate')");
    expect(text).toContain('    ▶ Step 5: post-hook (bash)');
    expect(text.indexOf('Step 4: scan')).toBeLessThan(text.indexOf('Step 5: post-hook'));
  });
});

describe('decision routing helpers', () => {
  it('routeDecision records why a condition counted as false', () => {
    const r = routeDecision({ conditions: [{ if: 'x', goto: 'a' }] }, {}, () => {
      throw new UnevaluableCondition('nope');
    });
    expect(r.conditions[0]).toMatchObject({ truthy: false, goto: 'a' });
    expect(r.conditions[0]!.error).toBeInstanceOf(UnevaluableCondition);
    expect(r.goto).toBeUndefined();
  });

  it('staticConditionProblem allows variables, literals, operators and member calls only', () => {
    const lib = (n: string) => n === 'file_exists' || n === 'exec_cmd';
    const v = { a: 1, s: 'x', Target: 'example.com' };
    expect(staticConditionProblem('a > 0 && s == "x" && Target.endsWith(".com") && Math.max(a, 2) === 2 && typeof s === \'string\'', v, lib)).toBeUndefined();
    expect(staticConditionProblem('1.5e3 > a && [...s].length', v, lib)).toBeUndefined();
    expect(staticConditionProblem('"exec_cmd(1)" == s', v, lib)).toBeUndefined();
    expect(staticConditionProblem('exec_cmd("id")', v, lib)).toBe('calls exec_cmd()');
    expect(staticConditionProblem('file_exists', v, lib)).toBe('calls file_exists()');
    expect(staticConditionProblem('s.constructor.constructor("x")()', v, lib)).toBe("reads the property 'constructor'");
    expect(staticConditionProblem('`${a}`', v, lib)).toBe('uses a template literal');
    expect(staticConditionProblem('this.exec_cmd("id")', { ...v, this: 1 }, lib)).toBe("uses 'this'");
    expect(staticConditionProblem('process.exit()', { ...v, process: 1 }, lib)).toBe("uses 'process'");
    expect(staticConditionProblem('exec\\u005fcmd("id")', { ...v, exec: 1 }, lib)).toBe('uses an escape outside a string');
    expect(staticConditionProblem('b == 1', v, lib)).toBe("reads 'b', which is not known before the run");
  });
});
