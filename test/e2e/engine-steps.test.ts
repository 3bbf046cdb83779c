import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync, chmodSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { finalJson, runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const FIX = join(ROOT, 'test/fixtures/engine');
let base: string;
let cleanup: () => void;

function osm(args: string[], opts: Parameters<typeof runOsm>[1] = {}) {
  return runOsm(['-b', base, '-F', FIX, ...args], opts);
}

function db() {
  return new Database(join(base, 'database-osm.sqlite'), { readonly: true });
}

beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-engine-'));
});
afterAll(() => cleanup());

describe('bash steps', () => {
  it('runs command, commands, parallel_commands, env vars and std_file', async () => {
    const r = await osm(['run', '-m', 'bash-forms', '-t', 'example.com', '-p', 'greeting=hi']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('$ echo "hi example.com" --fast');
    expect(r.stdout).toContain('hi example.com --fast');
    expect(r.stdout).toMatch(/one\n\s+two/);
    for (const w of ['alpha', 'beta', 'gamma']) expect(r.stdout).toContain(w);
    expect(r.stdout).toContain('env=example.com ws=example.com p=hi');
    expect(r.stdout).toContain('saved');
    expect(r.stdout).toContain('Status: completed');
    expect(existsSync(join(base, 'workspaces/example.com/std/out.txt'))).toBe(true);
  });

  it('records the run, its steps, events and artifacts in the database', async () => {
    const r = await osm(['run', '-m', 'bash-forms', '-t', 'db.example.com', '--json']);
    expect(r.code).toBe(0);
    const run = finalJson(r.stdout);
    expect(run.status).toBe('completed');
    expect(run.workspace).toBe('example.com');
    const d = db();
    const row = d.prepare('SELECT * FROM runs WHERE run_uuid = ?').get(run.run_uuid) as Record<string, unknown>;
    expect(row.status).toBe('completed');
    expect(row.total_steps).toBe(6);
    expect(row.completed_steps).toBe(6);
    expect(row.current_pid).toBe(0);
    expect(row.started_at).toBeTruthy();
    expect(row.completed_at).toBeTruthy();
    const steps = d.prepare('SELECT step_name, status, duration_ms, command, output FROM step_results WHERE run_id = ? ORDER BY id').all(row.id) as Record<string, unknown>[];
    expect(steps.map((s) => s.step_name)).toEqual(['single', 'sequential', 'parallel', 'env-vars', 'std-file', 'check-std']);
    expect(steps.every((s) => s.status === 'completed')).toBe(true);
    expect(steps[0]!.command).toBe('echo "hello db.example.com" --fast');
    const topics = (d.prepare('SELECT topic FROM event_logs WHERE run_id = ? ORDER BY id').all(run.run_uuid) as { topic: string }[]).map((e) => e.topic);
    expect(topics[0]).toBe('run.started');
    expect(topics.filter((t) => t === 'step.completed')).toHaveLength(6);
    expect(topics.at(-1)).toBe('run.completed');
    const started = d.prepare("SELECT data, source FROM event_logs WHERE run_id = ? AND topic = 'run.started'").get(run.run_uuid) as { data: string; source: string };
    expect(started.source).toBe('cli');
    expect(JSON.parse(started.data)).toMatchObject({ target: 'db.example.com' });
    const arts = d.prepare('SELECT name, artifact_type, content_type, size_bytes FROM artifacts WHERE run_id = ?').all(row.id) as Record<string, unknown>[];
    expect(arts.map((a) => a.name).sort()).toEqual(['state-completed', 'state-console-log', 'state-execution-log', 'state-file', 'state-workflow']);
    d.close();
    const ws = join(base, 'workspaces/example.com');
    for (const f of ['run-execution.log', 'run-console.log', 'run-workflow.yaml', 'run-state.json', 'run-completed.json']) expect(existsSync(join(ws, f))).toBe(true);
    const state = JSON.parse(readFileSync(join(ws, 'run-state.json'), 'utf8'));
    expect(state.run).toMatchObject({ run_uuid: run.run_uuid, status: 'completed', workflow_name: 'bash-forms' });
    const lines = readFileSync(join(ws, 'run-execution.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.some((l) => l.message === 'Step completed' && l.step_name === 'single')).toBe(true);
  });
});

describe('function steps', () => {
  it('evaluates function, functions and parallel_functions with exports', async () => {
    const r = await osm(['run', '-m', 'function-forms', '-t', 'example.com']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[INFO] first');
    expect(r.stdout).toContain('[WARN] second');
    expect(r.stdout).toContain('trimmed=x literal=example.com-lit');
    expect(r.stdout).toContain('[INFO] abc');
    expect(r.stdout).toMatch(/\[output\]\n\s+abc!/);
  });
});

describe('control flow', () => {
  it('handles pre_condition, decision switch/conditions, goto, _end and actions', async () => {
    const r = await osm(['run', '-m', 'control', '-t', 'example.com']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('SHOULD-NOT-RUN');
    expect(r.stdout).toContain('◌ skipped-by-false (skipped)');
    expect(r.stdout).toContain('bool-ok');
    expect(r.stdout).toContain('inline-fast');
    expect(r.stdout).not.toContain('JUMPED-OVER-SHOULD-NOT-PRINT');
    expect(r.stdout).toContain('logged example.com');
    expect(r.stdout).toContain('from_action=action-value');
    expect(r.stdout).toContain('condition-inline');
    expect(r.stdout).not.toContain('AFTER-END-SHOULD-NOT-RUN');
    expect(r.stdout).toContain('decision-inline-bash');
    expect(r.stdout).toContain('completed_steps');
    expect(r.stdout).toContain('Status: completed');
  });

  it('fails a step whose pre_condition errors and stops the module', async () => {
    const r = await osm(['run', '-m', 'precondition-error', '-t', 'example.com']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('pre-condition evaluation failed');
    expect(r.stdout).not.toContain('NEVER');
    expect(r.stdout + r.stderr).toContain('Status: failed');
  });

  it('a pre_condition that throws fails the step with its message and still runs on_error actions', async () => {
    const r = await osm(['run', '-m', 'precondition-error-continue', '-t', 'example.com']);
    expect(r.stderr).toContain('pre-condition evaluation failed');
    expect(r.stdout + r.stderr).not.toContain('before initialization');
    expect(r.stdout).not.toContain('SHOULD-NOT-RUN');
    expect(r.stdout).toContain('AFTER-RAN'); // on_error: continue took effect
  });

  it('runs depends_on as a DAG and does not run dependents of a failed step', async () => {
    const r = await osm(['run', '-m', 'dag', '-t', 'example.com']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/\[output\]\n\s+a\n/);
    // b and c run at the same time: b's line is shown live, named `[b]` while another step runs.
    expect(r.stdout).toMatch(/\n(\[output\]\n\s+|\s+\[b\] )b\n/);
    expect(r.stdout).not.toContain('D-SHOULD-NOT-RUN');
    expect(r.stdout).toContain("dependency 'c' failed");
  });

  it('never fails the run because of a hook', async () => {
    const r = await osm(['run', '-m', 'hooks', '-t', 'example.com']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('pre-hook-ran');
    expect(r.stdout).toContain('main-ran');
    expect(r.stdout).toContain('[INFO] post-hook-ran');
    expect(r.stdout).toContain("pre-scan hook 'pre-hook-fails' failed");
  });

  it('skip() ends the module as skipped with exit 0', async () => {
    const r = await osm(['run', '-m', 'skip', '-t', 'example.com']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('first');
    expect(r.stdout).not.toContain('AFTER-SKIP-SHOULD-NOT-RUN');
    expect(r.stdout).toContain('nothing to do');
  });

  it('checks dependencies before any step runs', async () => {
    const a = await osm(['run', '-m', 'deps', '-t', 'example.com']);
    expect(a.code).toBe(1);
    expect(a.stderr).toContain('required command not found: definitely-not-a-real-command-xyz');
    expect(a.stdout).not.toContain('NEVER');
    const b = await osm(['run', '-m', 'target-types', '-t', 'example.com']);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain('Target type mismatch');
    expect(b.stderr).toContain('dependency');
    expect(b.stderr).toContain('required types');
    const c = await osm(['run', '-m', 'target-types', '-t', 'example.com', '--skip-validation']);
    expect(c.code).toBe(0);
    const d = await osm(['run', '-m', 'fn-condition', '-t', 'example.com']);
    expect(d.code).toBe(1);
    expect(d.stderr).toContain('function condition failed');
  });
});

describe('parallel-steps and foreach', () => {
  it('runs parallel children and merges their exports', async () => {
    const r = await osm(['run', '-m', 'parallel-steps', '-t', 'example.com']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('p1-out');
    expect(r.stdout).toContain('P2-OUT');
    expect(r.stdout).toContain('p1_done=yes');
  });

  it('foreach over 1,000 lines with parallel 8 and an inline array', async () => {
    const r = await osm(['run', '-m', 'foreach', '-t', 'fe.example.org', '-q', '--json']);
    expect(r.code).toBe(0);
    const dir = join(base, 'workspaces/example.org/fe');
    const outs = readdirSync(dir).filter((f) => f.endsWith('.out'));
    expect(outs).toHaveLength(1000);
    expect(readFileSync(join(dir, 'host-42.out'), 'utf8')).toBe('42:host-42\n');
    const d = db();
    const step = d.prepare("SELECT output FROM step_results WHERE step_name = 'count-out' ORDER BY id DESC").get() as { output: string };
    expect(step.output).toBe('1000');
    const arr = d.prepare("SELECT output FROM step_results WHERE step_name = 'array-loop' ORDER BY id DESC").get() as { output: string };
    expect(arr.output).toBe('arr-x1\narr-x2\narr-x3');
    d.close();
  });

  it('never lets foreach items from tool output become shell or JS code', async () => {
    const r = await osm(['run', '-m', 'foreach-hostile', '-t', 'hostile.example.net']);
    expect(r.code).toBe(0);
    const dir = join(base, 'workspaces/example.net/fh');
    expect(readdirSync(dir).filter((f) => f.startsWith('PWNED'))).toEqual([]);
    expect(r.stdout).toContain('item=ok.example.com');
    expect(r.stdout).toContain(`dq=$(touch ${dir}/PWNED2)`);
    expect(r.stdout).toContain('sq=`touch');
    expect(r.stdout).toContain(`fn=a'b"c`);
  });
});

describe('http, llm and remote-bash', () => {
  let server: Server;
  let url: string;
  const seen: { method: string; url: string; body: string; headers: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, body, headers: req.headers });
        if (req.url === '/data') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        if (req.url === '/echo') return res.writeHead(201).end(body);
        if (req.url?.endsWith('/chat/completions')) {
          return res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({ id: 'c1', model: 'fake-model', choices: [{ message: { role: 'assistant', content: `summary of ${JSON.parse(body).messages[1].content}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }),
          );
        }
        if (req.url?.endsWith('/embeddings')) {
          return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ model: 'emb', data: [{ index: 0, embedding: [0.1, 0.2] }, { index: 1, embedding: [0.3] }], usage: { prompt_tokens: 2, total_tokens: 2 } }));
        }
        res.writeHead(404).end('nope');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('http step: method, headers, body, auto-exports, 4xx is success', async () => {
    const r = await osm(['run', '-m', 'http', '-t', 'example.com', '-p', `base_url=${url}`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('status=200 body={"ok":true} posted=201');
    expect(r.stdout).toContain('code404=404');
    const post = seen.find((s) => s.url === '/echo')!;
    expect(post.method).toBe('POST');
    expect(post.body).toBe('{"t":"example.com"}');
    expect(seen.find((s) => s.url === '/data')!.headers['x-test']).toBe('example.com');
  });

  it('llm step: chat and embeddings through the configured provider', async () => {
    const set = await runOsm(['-b', base, 'config', 'set', 'llm_config.llm_providers.0.base_url', `${url}/v1/chat/completions`]);
    expect(set.code).toBe(0);
    const r = await osm(['run', '-m', 'llm', '-t', 'example.com']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('content=summary of Summarise example.com model=fake-model');
    expect(r.stdout).toContain('[[0.1,0.2],[0.3]]');
  });

  it('remote-bash builds the docker and ssh command lines', async () => {
    const fake = join(base, 'fakebin');
    mkdirSync(fake, { recursive: true });
    for (const name of ['docker', 'ssh']) {
      const p = join(fake, name);
      writeFileSync(p, `#!/bin/sh\nfor a in "$@"; do printf '<%s>' "$a"; done; echo\n`);
      chmodSync(p, 0o755);
    }
    const r = await osm(['run', '-m', 'remote', '-t', 'example.com'], { env: { PATH: `${fake}:${process.env.PATH}` } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('<run><--rm>');
    expect(r.stdout).toContain('<-e><FOO=bar>');
    expect(r.stdout).toContain('<-v></tmp:/data:ro><--network><host><-w></work><alpine:3><sh><-c><echo docker example.com>');
    expect(r.stdout).toContain('<-p><2222><-i></keys/id_ed25519><scanner@10.0.0.5><--><cd /srv/scan && echo ssh example.com>');
  });
});

describe('flows', () => {
  it('runs modules in dependency order with params, exports, conditions and exclusions', async () => {
    const r = await osm(['run', '-f', 'flow', '-t', 'example.com', '-x', 'excluded']);
    // The record stays 'completed' (reference semantics) but a failed module exits 1 (issue 16).
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("module 'broken' failed");
    expect(r.stdout).toContain('mod-a from_flow=flow-value flow=flow module=first');
    expect(r.stdout).toContain('mod-b sees a_result=a-value');
    expect(r.stdout).not.toContain('MOD-C-RAN');
    expect(r.stdout).toContain('inline-module-ran');
    expect(r.stdout).toContain('Status: completed');
    expect(r.stdout).toContain('1 module(s) failed: broken');
    expect(r.stdout).toMatch(/skipped\s+│ excluded/);
    expect(r.stdout).toMatch(/skipped\s+│ conditional/);
  });

  it('a CLI param beats the flow param default; fuzzy exclusion works', async () => {
    const r = await osm(['run', '-f', 'flow', '-t', 'example.com', '-p', 'flow_param=cli-value', '-X', 'xclud']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('mod-a from_flow=cli-value');
    expect(r.stdout).not.toContain('MOD-C-RAN');
  });

  it('on_error abort fails the flow at once', async () => {
    const r = await osm(['run', '-f', 'flow-abort', '-t', 'example.com']);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('MOD-C-RAN');
    expect(r.stderr).toContain('aborted');
  });
});
