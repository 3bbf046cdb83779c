import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { call, callWith, tempDir } from './call.js';
import { evaluate, ScriptError, SkipSignal } from '../../../src/engine/js-runtime.js';

const t = tempDir();
afterAll(t.cleanup);

describe('utility functions', () => {
  it('len: bytes of strings, length of arrays, else 0', () => {
    expect(call('len', 'hello')).toBe(5);
    expect(call('len', 'é')).toBe(2);
    expect(call('len', [1, 2, 3])).toBe(3);
    expect(call('len', 42)).toBe(0);
    expect(evaluate('len(split("a,b", ","))', {}).value).toBe(2);
  });

  it('is_empty / is_not_empty / isEmpty', () => {
    for (const v of [undefined, null, '', '   ', 'undefined', []]) expect(call('is_empty', v)).toBe(true);
    for (const v of ['x', 0, false, {}, ['a']]) expect(call('is_empty', v)).toBe(false);
    expect(call('isEmpty', '')).toBe(true);
    expect(call('is_not_empty', 'x')).toBe(true);
    expect(call('isNotEmpty', [])).toBe(false);
    expect(evaluate('is_empty(nothing)', { nothing: '' }).value).toBe(true);
  });

  it('printf and cat_file print and return', () => {
    const lines: string[] = [];
    expect(callWith({ log: (l) => lines.push(l) }, 'printf', 'hello')).toBe('hello');
    const p = t.file('cat.txt', 'line1\nline2\n');
    expect(callWith({ log: (l) => lines.push(l) }, 'cat_file', p)).toBe('line1\nline2\n');
    expect(callWith({ log: (l) => lines.push(l) }, 'cat_file', path.join(t.dir, 'none'))).toBe('');
    expect(lines).toEqual(['hello', 'line1\nline2']);
  });

  it('exit() and skip() throw, never exit', () => {
    expect(() => call('exit', 0)).toThrow(ScriptError);
    expect(() => call('skip')).toThrow(SkipSignal);
    expect(() => call('skip', 'why')).toThrow('skip module: why');
  });

  it('exec_cmd / bash: trimmed stdout, "" on non-zero exit', () => {
    expect(call('exec_cmd', 'echo "  hi  "')).toBe('hi');
    expect(call('execCmd', 'printf abc')).toBe('abc');
    expect(call('bash', 'echo out; exit 3')).toBe('');
    expect(call('exec_cmd', '')).toBe('');
    expect(callWith({ cwd: t.dir, log: () => {} }, 'exec_cmd', 'pwd')).toBe(t.dir);
  });

  it('exec_cmd is bounded by the evaluation budget', () => {
    expect(() => evaluate('exec_cmd("sleep 5"); 1', {}, { timeoutMs: 300 })).toThrow(/timed out/);
    // However the race between vm's timer and the killed child ends, the script has timed out.
    expect(() => evaluate('try { exec_cmd("sleep 5") } catch (e) {}; 1', {}, { timeoutMs: 300 })).toThrow(/timed out/);
    expect(() => evaluate('let r = exec_cmd("sleep 5"); r === "" ? 1 : 2', {}, { timeoutMs: 300 })).toThrow(/timed out/);
  });

  it('sleep blocks within the budget', () => {
    expect(() => evaluate('sleep(30); 1', {}, { timeoutMs: 200 })).toThrow(/timed out/);
    // Caught by the script or not, a sleep past the deadline ends the evaluation.
    expect(() => evaluate('try { sleep(30) } catch (e) {}; 1', {}, { timeoutMs: 200 })).toThrow(/timed out/);
    expect(evaluate('sleep(1); 7', {}, { timeoutMs: 10_000 }).value).toBe(7);
  });

  it('command_exists / commandExists', () => {
    expect(call('command_exists', 'sh')).toBe(true);
    expect(call('commandExists', 'definitely-not-a-command-xyz')).toBe(false);
    expect(call('command_exists', '')).toBe(false);
  });

  it('pick_valid returns the first usable value', () => {
    expect(call('pick_valid', undefined, '', 'undefined', false, [], {}, '  ', 'x', 'y')).toBe('x');
    expect(call('pick_valid', 0)).toBe(0);
    expect(call('pick_valid', null, '')).toBe('');
    expect(call('pick_valid', ...Array(10).fill(''), 'eleventh')).toBe('');
  });

  it('exec_python runs python3 when present', () => {
    if (!call('command_exists', 'python3') && !call('command_exists', 'uv')) return;
    expect(call('exec_python', 'print(6 * 7)')).toBe('42');
    const f = t.file('p.py', 'print("file")\n');
    expect(call('exec_python_file', f)).toBe('file');
    expect(call('exec_python', 'raise SystemExit(2)')).toBe('');
  });

  it('exec_ts answers "" without bun', () => {
    if (call('command_exists', 'bun')) return;
    expect(call('exec_ts', 'console.log(1)')).toBe('');
    expect(call('exec_ts_file', t.file('x.ts', ''))).toBe('');
  });

  it('run_module / run_flow run the child osm in the calling run\'s base and workflow folders (both settings shapes)', () => {
    const base = path.join(t.dir, 'rm-base');
    const wf = path.join(t.dir, 'rm-workflows');
    t.file('rm-workflows/rm-child.yaml', 'name: rm-child\nkind: module\nsteps:\n  - name: hello\n    type: bash\n    command: echo "child ran on {{Target}}"\n');
    t.file('rm-workflows/rm-flow.yaml', 'name: rm-flow\nkind: flow\nmodules:\n  - name: rm-child\n    path: rm-child.yaml\n');
    const settings = { base_folder: base, environments: { workflows: wf } };
    // The evaluator process carries the settings object; inline evaluation the loaded settings.
    const out = callWith({ log: () => {}, settings }, 'run_module', 'rm-child', 'example.com') as string;
    expect(out).toContain('child ran on example.com');
    expect(fs.existsSync(path.join(base, 'osm-settings.yaml'))).toBe(true);
    const flow = callWith({ log: () => {}, settings: { settings } }, 'runFlow', 'rm-flow', 'flow.example.com') as string;
    expect(flow).toContain('child ran on flow.example.com');
  }, 60_000);

  it('sudo_auth: sudo -n -v without a password, the password on stdin with -S; false when sudo refuses or is missing', () => {
    const saved = process.env.PATH;
    const bin = path.join(t.dir, 'sudo-bin');
    const record = path.join(t.dir, 'sudo-calls.jsonl');
    fs.mkdirSync(bin, { recursive: true });
    // A stand-in sudo: records argv and stdin; accepts the password "right" (and -n when NOPASSWD is set).
    fs.writeFileSync(path.join(bin, 'sudo'), `#!${process.execPath}\nconst fs = require('node:fs');\nconst a = process.argv.slice(2);\nconst input = a.includes('-S') ? fs.readFileSync(0, 'utf8') : '';\nfs.appendFileSync(${JSON.stringify(record)}, JSON.stringify({ a, input }) + '\\n');\nprocess.exit(a.includes('-n') ? (process.env.NOPASSWD ? 0 : 1) : input === 'right\\n' ? 0 : 1);\n`);
    fs.chmodSync(path.join(bin, 'sudo'), 0o755);
    try {
      process.env.PATH = bin;
      expect(call('sudo_auth')).toBe(false);
      process.env.NOPASSWD = '1';
      expect(call('sudoAuth')).toBe(true);
      delete process.env.NOPASSWD;
      expect(call('sudo_auth', 'right')).toBe(true);
      expect(call('sudo_auth', 'wrong')).toBe(false);
      const calls = fs.readFileSync(record, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(calls).toEqual([
        { a: ['-n', '-v'], input: '' },
        { a: ['-n', '-v'], input: '' },
        { a: ['-S', '-p', '', '-v'], input: 'right\n' },
        { a: ['-S', '-p', '', '-v'], input: 'wrong\n' },
      ]);
      process.env.PATH = path.join(t.dir, 'no-bin');
      expect(call('sudo_auth', 'right')).toBe(false);
    } finally {
      process.env.PATH = saved;
      delete process.env.NOPASSWD;
    }
  });

  it('run_agent answers "" for unknown agents', () => {
    expect(call('run_agent', 'hello', 'no-such-agent')).toBe('');
    expect(call('run_agent')).toBe('');
  });
});

describe('logging and runtime variables', () => {
  it('log_* print prefixed lines and return the message', () => {
    const lines: string[] = [];
    const ctx = { log: (l: string) => lines.push(l) };
    expect(callWith(ctx, 'log_info', 'a')).toBe('a');
    callWith(ctx, 'log_debug', 'b');
    callWith(ctx, 'log_warn', 'c');
    callWith(ctx, 'log_error', 'd');
    callWith(ctx, 'logInfo', 'e');
    expect(callWith(ctx, 'print_red', 'r')).toBe('r');
    callWith(ctx, 'print_blue', 'b');
    callWith(ctx, 'printYellow', 'y');
    callWith(ctx, 'print_green', 'g');
    expect(lines).toEqual(['[INFO] a', '[DEBUG] b', '[WARN] c', '[ERROR] d', '[INFO] e', 'r', 'b', 'y', 'g']);
  });

  it('set_var / get_var keep values for one context', () => {
    const ctx = { log: () => {} };
    expect(callWith(ctx, 'set_var', 'x', 7)).toBe(7);
    expect(callWith(ctx, 'get_var', 'x')).toBe(7);
    expect(callWith({ log: () => {} }, 'get_var', 'x')).toBe('');
    expect(evaluate('setVar("y", [1]); getVar("y")', {}).value).toEqual([1]);
  });
});
