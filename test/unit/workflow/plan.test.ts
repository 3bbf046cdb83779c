import { describe, expect, it } from 'vitest';
import { buildPlan, formatPlan, orderModules, type PlanInput } from '../../../src/workflow/plan.js';
import type { ModuleRef, Step, Workflow } from '../../../src/workflow/types.js';
import { wf } from '../../helpers/workflow.js';


const vars = { Target: 'example.com', target: 'example.com', Output: '/ws/example.com', Workspace: 'example.com', TargetSpace: 'example.com', threads: 10, api_token: 's3cr3t-value' };
const input: PlanInput = { target: 'example.com', vars };

describe('buildPlan — module', () => {
  const steps: Step[] = [
    { name: 'probe', type: 'bash', command: 'httpx -u {{Target}} -o {{Output}}/probe.txt', speed_args: '-t {{threads}}', timeout: '5m', exports: { live: 'file_length("{{Output}}/probe.txt")' } },
    { name: 'use-export', type: 'bash', command: 'echo {{live}} {{Target}}', pre_condition: '{{live}} > {{missing}}' },
    { name: 'fn', type: 'function', functions: ['log_info("{{Target}}")', 'log_info("x")'] },
    {
      name: 'loop',
      type: 'foreach',
      input: '{{Output}}/probe.txt',
      variable: 'url',
      threads: '{{threads}}',
      step: { name: 'inner', type: 'bash', command: 'curl [[url]] > {{Output}}/[[_url_]].html' },
    },
    {
      name: 'par',
      type: 'parallel-steps',
      parallel_steps: [
        { name: 'p1', type: 'bash', command: 'echo {{Target}}' },
        { name: 'p2', type: 'http', url: 'https://{{Target}}/', method: 'post' },
      ],
    },
    { name: 'after', type: 'bash', commands: ['echo {{p2_http_resp.status_code}}', 'echo {{api_token}}'], depends_on: ['probe', 'ghost'] },
    { name: 'bad', type: 'bash', command: 'echo {{ Target' },
  ];
  const plan = buildPlan(wf({ kind: 'module', name: 'demo', description: 'a demo', steps }), input);

  it('carries workflow, target, workspace and output', () => {
    expect(plan.workflow).toEqual({ name: 'demo', kind: 'module', description: 'a demo' });
    expect(plan).toMatchObject({ target: 'example.com', workspace: 'example.com', output: '/ws/example.com', modules: [] });
  });

  it('renders commands known before execution, with structured args', () => {
    expect(plan.steps[0]).toMatchObject({ index: 0, name: 'probe', type: 'bash', renderedAt: 'plan', timeoutMs: 300_000, commands: ['httpx -u example.com -o /ws/example.com/probe.txt -t 10'] });
    expect(plan.steps[2]!.commands).toEqual(['log_info("example.com")', 'log_info("x")']);
  });

  it('leaves templates that need an earlier export unrendered and marks them', () => {
    expect(plan.steps[1]).toMatchObject({ renderedAt: 'runtime', commands: ['echo {{live}} example.com'], preCondition: '{{live}} > 0' });
    expect(plan.steps[5]).toMatchObject({ renderedAt: 'runtime', dependsOn: ['probe', 'ghost'] });
    expect(plan.steps[5]!.commands[0]).toBe('echo {{p2_http_resp.status_code}}');
  });

  it('marks foreach inner steps as run-time and renders what it can', () => {
    const loop = plan.steps[3]!;
    expect(loop.commands).toEqual(['foreach [[url]] in /ws/example.com/probe.txt | threads: 10']);
    expect(loop.renderedAt).toBe('runtime');
    expect(loop.children![0]).toMatchObject({ name: 'inner', renderedAt: 'runtime', commands: ['curl [[url]] > /ws/example.com/[[_url_]].html'] });
  });

  it('plans parallel-steps children', () => {
    const par = plan.steps[4]!;
    expect(par.renderedAt).toBe('plan');
    expect(par.children!.map((c) => [c.name, c.commands])).toEqual([
      ['p1', ['echo example.com']],
      ['p2', ['POST https://example.com/']],
    ]);
  });

  it('redacts secrets in variables and rendered commands', () => {
    expect(plan.variables.api_token).toBe('[REDACTED]');
    expect(plan.variables.Target).toBe('example.com');
    expect(plan.steps[5]!.commands[1]).toBe('echo [REDACTED]');
    expect(JSON.stringify(plan)).not.toContain('s3cr3t-value');
  });

  it('reports template errors and unknown dependencies as warnings', () => {
    expect(plan.steps[6]!.error).toMatch(/template rendering failed/);
    expect(plan.steps[6]!.commands).toEqual(['echo {{ Target']);
    expect(plan.warnings.some((w) => w.includes("depends on non-existent step 'ghost'"))).toBe(true);
    expect(plan.warnings.some((w) => w.includes('steps.bad') && w.includes('unclosed'))).toBe(true);
  });

  it('formats a dry-run text with the workflow name and every step name', () => {
    const text = formatPlan(plan);
    expect(text).toContain('DRY-RUN');
    expect(text).toContain('demo');
    for (const name of ['probe', 'use-export', 'fn', 'loop', 'inner', 'par', 'p1', 'p2', 'after', 'bad']) expect(text).toContain(name);
    expect(text).toContain('$ httpx -u example.com');
    expect(text).not.toContain('s3cr3t-value');
  });
});

describe('buildPlan — flow', () => {
  const modules: Record<string, Workflow> = {
    recon: wf({ kind: 'module', name: 'recon', steps: [{ name: 'r1', type: 'bash', command: 'echo {{Target}} {{ModuleName}} {{FlowName}} {{depth}}', exports: { recon_done: 'true' } }], params: [{ name: 'depth', type: 'string', required: false, default: 'shallow' }] }),
    probe: wf({ kind: 'module', name: 'probe', steps: [{ name: 'p1', type: 'bash', command: 'echo {{recon_done}} {{mode}}' }] }),
    scan: wf({ kind: 'module', name: 'scan', steps: [{ name: 's1', type: 'bash', command: 'echo scan' }] }),
    'vuln-scan': wf({ kind: 'module', name: 'vuln-scan', steps: [{ name: 'v1', type: 'bash', command: 'echo v' }] }),
    needy: wf({ kind: 'module', name: 'needy', params: [{ name: 'must', type: 'string', required: true }], steps: [{ name: 'n1', type: 'bash', command: 'echo' }] }),
  };
  const refs: ModuleRef[] = [
    { name: 'scan', path: 'modules/scan.yaml', depends_on: ['probe'] },
    { name: 'probe', path: 'modules/probe.yaml', depends_on: ['recon'], params: { mode: '{{Target}}-fast' }, condition: "'{{x}}' == ''" },
    { name: 'recon', path: 'modules/recon.yaml', params: { depth: 'deep' } },
    { name: 'vuln-scan', path: 'modules/vuln-scan.yaml', depends_on: ['recon'] },
    { name: 'inline', steps: [{ name: 'i1', type: 'bash', command: 'echo inline {{Target}}' }] },
    { name: 'needy', path: 'modules/needy.yaml' },
    { name: 'orphan', path: 'modules/scan.yaml', depends_on: ['nope'] },
    { name: 'missing', path: 'modules/missing.yaml' },
  ];
  const load = (ref: ModuleRef) => {
    const mod = modules[ref.path!.replace(/^modules\/|\.yaml$/g, '')];
    if (!mod) throw new Error(`workflow not found: ${ref.path}`);
    return mod;
  };
  const flow = wf({ kind: 'flow', name: 'general', modules: refs });

  it('orders modules with Kahn, declaration order for ties', () => {
    const plan = buildPlan(flow, input, load);
    expect(plan.steps).toEqual([]);
    expect(plan.modules.map((m) => m.name)).toEqual(['recon', 'inline', 'needy', 'missing', 'probe', 'vuln-scan', 'scan', 'orphan']);
    expect(orderModules(refs).blocked.map((r) => r.name)).toEqual(['orphan']);
  });

  it('renders module steps with flow vars, module params and ModuleName/FlowName', () => {
    const plan = buildPlan(flow, input, load);
    const recon = plan.modules.find((m) => m.name === 'recon')!;
    expect(recon.steps[0]!.commands).toEqual(['echo example.com recon general deep']);
    const probe = plan.modules.find((m) => m.name === 'probe')!;
    expect(probe).toMatchObject({ path: 'modules/probe.yaml', dependsOn: ['recon'], condition: "'{{x}}' == ''" });
    // recon_done is exported by an earlier module: only known at run time
    expect(probe.steps[0]).toMatchObject({ renderedAt: 'runtime', commands: ['echo {{recon_done}} example.com-fast'] });
    expect(plan.modules.find((m) => m.name === 'inline')!.steps[0]!.commands).toEqual(['echo inline example.com']);
  });

  it('records load errors, missing required params and unmet dependencies', () => {
    const plan = buildPlan(flow, input, load);
    expect(plan.modules.find((m) => m.name === 'missing')!.error).toMatch(/workflow not found/);
    expect(plan.modules.find((m) => m.name === 'needy')!.error).toBe('required parameter missing: must');
    expect(plan.modules.find((m) => m.name === 'orphan')!.error).toBe('circular dependency detected: module orphan has unmet dependencies');
    expect(plan.warnings.some((w) => w.includes('unknown: nope'))).toBe(true);
  });

  it('applies exact and fuzzy exclusions but keeps the order', () => {
    const plan = buildPlan(flow, { ...input, exclude: ['probe'], fuzzyExclude: ['vuln'] }, load);
    expect(plan.modules.find((m) => m.name === 'probe')).toMatchObject({ skipReason: 'excluded', steps: [] });
    expect(plan.modules.find((m) => m.name === 'vuln-scan')).toMatchObject({ skipReason: 'fuzzy-excluded', steps: [] });
    // excluded modules still unblock their dependents
    expect(plan.modules.find((m) => m.name === 'scan')!.steps).toHaveLength(1);
  });

  it('detects cycles', () => {
    const cyc = wf({ kind: 'flow', name: 'cyc', modules: [{ name: 'a', path: 'x', depends_on: ['b'] }, { name: 'b', path: 'x', depends_on: ['a'] }, { name: 'c', path: 'x' }] });
    const { order, blocked } = orderModules(cyc.modules);
    expect(order.map((r) => r.name)).toEqual(['c']);
    expect(blocked.map((r) => r.name)).toEqual(['a', 'b']);
  });

  it('formats modules and their steps', () => {
    const text = formatPlan(buildPlan(flow, { ...input, exclude: ['probe'] }, load));
    expect(text).toContain('DRY-RUN');
    expect(text).toContain('general');
    expect(text).toContain('Module 1: recon');
    expect(text).toContain('skipped (excluded)');
    for (const name of ['r1', 'i1', 's1', 'v1']) expect(text).toContain(name);
  });

  it('does not run generators of module params', () => {
    const gen = wf({ kind: 'module', name: 'gen', params: [{ name: 'tag', type: 'string', required: false, generator: 'execCmd("touch /nonexistent/osm-should-not-run")' }], steps: [{ name: 'g1', type: 'bash', command: 'echo {{tag}}' }] });
    const plan = buildPlan(wf({ kind: 'flow', name: 'f', modules: [{ name: 'gen', path: 'gen' }] }), input, () => gen);
    expect(plan.modules[0]!.steps[0]!.commands[0]).toBe('echo [generator: execCmd("touch /nonexistent/osm-should-not-run")]');
  });

  it('plans hooks', () => {
    const hooked = wf({ kind: 'module', name: 'h', hooks: { pre_scan_steps: [{ name: 'pre', type: 'bash', command: 'echo start {{Target}}' }], post_scan_steps: [{ name: 'post', type: 'bash', command: 'echo end' }] }, steps: [{ name: 'main', type: 'bash', command: 'echo' }] });
    const plan = buildPlan(hooked, input);
    expect(plan.hooks.pre[0]!.commands).toEqual(['echo start example.com']);
    expect(plan.hooks.post[0]!.name).toBe('post');
    const text = formatPlan(plan);
    expect(text).toContain('pre');
    expect(text).toContain('post');
  });
});
