import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Drives the built CLI (test/global-setup.ts builds dist/ when it is stale).
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'osm.js');
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

function osm(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, '-b', base, ...args], { cwd: base, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('osm func', () => {
  it('eval renders {{target}} then evaluates', () => {
    const r = osm('func', 'eval', 'trim("  {{target}} ")', '-t', 'example.com');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('example.com\n');
  });

  it('eval renders the built-in variables a run has (BaseFolder, Workspaces, Output, threads)', () => {
    const r = osm('eval', '"{{BaseFolder}}|{{Output}}|{{threads}}|{{TargetSpace}}"', '-t', 'example.com');
    expect(r.code, r.stderr).toBe(0);
    const [baseFolder, output, threads, space] = r.stdout.trim().split('|');
    expect(baseFolder).toBe(base);
    expect(output).toBe(`${base}/workspaces/example.com`);
    expect(Number(threads)).toBeGreaterThan(0);
    expect(space).toBe('example.com');
  });

  it('reference eval inputs: -f fn args, --stdin, --function-file, -T one evaluation per target; list -s', () => {
    expect(osm('eval', '-f', 'toUpperCase', 'abc').stdout).toBe('ABC\n');
    const piped = spawnSync(process.execPath, [BIN, '-b', base, 'func', 'eval', '--stdin', '-t', 'x.com'], { cwd: base, encoding: 'utf8', input: 'trim("  {{Target}} ")', env: { ...process.env, NO_COLOR: '1' } });
    expect(piped.stdout).toBe('x.com\n');
    const script = path.join(base, 'script.js');
    fs.writeFileSync(script, 'len("{{Target}}")');
    expect(osm('eval', '--function-file', script, '-t', 'abcd').stdout).toBe('4\n');
    const targets = path.join(base, 'targets.txt');
    fs.writeFileSync(targets, 'a.com\n# comment\nb.com\n');
    expect(osm('eval', '-T', targets, 'toUpperCase("{{Target}}")').stdout).toBe('A.COM\nB.COM\n');
    expect(JSON.parse(osm('eval', '-T', targets, '"{{Target}}"', '--json').stdout).map((r: { result: string }) => r.result)).toEqual(['a.com', 'b.com']);
    const list = osm('func', 'list', '-s', 'base64', '--json');
    expect(Object.values(JSON.parse(list.stdout).functions).flat().map((f) => (f as { name: string }).name)).toEqual(['base64_encode(str)', 'base64_decode(str)']);
    expect(osm('eval', '-f', 'bad name()', 'x').code).toBe(1);
  });

  it('eval --json prints { result, rendered_script }', () => {
    const r = osm('func', 'eval', 'trim("  {{target}} ")', '-t', 'example.com', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ result: 'example.com', rendered_script: 'trim("  example.com ")' });
  });

  it('log_info prints [INFO] hi; -e and the `function` alias work', () => {
    const r = osm('func', 'eval', 'log_info("hi")');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[INFO] hi\n');
    const e = osm('function', '-e', 'toUpperCase("{{name}}")', '-p', 'name=osm');
    expect(e.stdout).toBe('OSM\n');
  });

  it('non-string results print as JSON', () => {
    expect(osm('func', 'eval', '[1, {a: true}]').stdout).toBe('[1,{"a":true}]\n');
  });

  it('a hostile target stays data', () => {
    const r = osm('func', 'eval', 'trim("{{target}}")', '-t', 'x"); exec_cmd("touch PWNED"); ("');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('x"); exec_cmd("touch PWNED"); ("\n');
    expect(fs.existsSync(path.join(base, 'PWNED'))).toBe(false);
  });

  it('script errors, exit() and bad params fail with one clear line', () => {
    const r = osm('func', 'eval', 'nope()');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('Error: error executing expression: ReferenceError: nope is not defined\n');
    const x = osm('func', 'eval', 'exit(0)');
    expect(x.code).toBe(1);
    expect(x.stderr).toContain('exit() is not allowed');
    const p = osm('func', 'eval', '1', '-p', 'novalue');
    expect(p.code).toBe(1);
    expect(p.stderr).toContain('params[0]: expected key=value');
  });

  it('a rejected promise left by a script does not crash the CLI', () => {
    const r = osm('func', 'eval', 'Promise.reject(new Error("x")); (async () => { throw 1 })(); 5');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('5\n');
  });

  it('list prints the catalogue grouped by category', () => {
    const r = osm('func', 'list');
    expect(r.code).toBe(0);
    for (const title of ['File Functions', 'String Functions', 'HTTP Functions', 'Database Functions', 'URL Processing Functions']) {
      expect(r.stdout).toContain(title);
    }
    expect(r.stdout).toContain('file_exists(path)');
    expect(r.stdout).toContain('fileExists');
  });

  it('list <category> --json has the API shape; unknown categories fail', () => {
    const r = osm('func', 'list', 'http', '--json');
    const body = JSON.parse(r.stdout) as { functions: Record<string, { name: string }[]> };
    expect(Object.keys(body.functions)).toEqual(['http']);
    expect(body.functions.http!.map((f) => f.name)).toContain('http_get(url)');
    const bad = osm('func', 'list', 'nope');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('unknown function category: nope');
  });
});
