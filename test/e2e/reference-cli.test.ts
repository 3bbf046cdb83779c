/**
 * What users and scripts read from the reference CLI (workflow-engine §5, §1.16, §3.16): version
 * details, `workflow show -v` variables, validation wording, multi-target dry-run summaries,
 * not-found messages, `osm agent`, and no command in --help that only says "not supported".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runOsm } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

let tmp: ReturnType<typeof tempDir>;
let base: string;
const osm = (args: string[], input?: string) => runOsm(['-b', base, ...args], input === undefined ? {} : { input });

beforeAll(() => {
  tmp = tempDir('osm-refcli-');
  base = join(tmp.dir, 'base');
});
afterAll(() => tmp.cleanup());

describe('--version', () => {
  it('prints the reference lines: name, Version, Build, Commit, Author, Docs', async () => {
    const r = await runOsm(['--version']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('osm - security-automation workflow engine');
    for (const [i, key] of ['Version', 'Build', 'Commit', 'Author', 'Docs'].entries()) expect(lines[i + 1]).toMatch(new RegExp(`^${key}: \\S`));
    expect(lines[2]).toMatch(/^Build: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(r.stdout).toContain('Compatible with: Osmedeus v5.1.0');
    expect((await runOsm(['version'])).stdout).toBe(r.stdout);
    const j = JSON.parse((await runOsm(['version', '--json'])).stdout);
    expect(Object.keys(j)).toEqual(['name', 'version', 'build', 'commit', 'author', 'docs', 'compatible_with']);
  });
});

describe('workflow show -v', () => {
  it('adds a table of the variables the templates use, with their source', async () => {
    const plain = await osm(['workflow', 'show', 'sample-recon']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain('Variables:');
    const v = await osm(['workflow', 'show', 'sample-recon', '-v']);
    const table = v.stdout.slice(v.stdout.indexOf('Variables:'));
    expect(table).toMatch(/│ prefixes\s+│ param\s+│ string param, default www,api,dev,mail,www/);
    expect(table).toMatch(/│ Output\s+│ built-in │ the workspace folder/);
    expect(table).toMatch(/│ raw_file\s+│ export\s+│ exported by step discover/);
    const j = JSON.parse((await osm(['workflow', 'show', 'sample-recon', '-v', '--json'])).stdout);
    expect(j.variables).toContainEqual({ name: 'host_count', source: 'export', description: 'exported by step dedupe' });
  });

  it('names variables defined nowhere', async () => {
    writeFileSync(join(tmp.dir, 'undef.yaml'), 'kind: module\nname: undef\nsteps:\n  - { name: a, type: bash, command: "echo {{nowhere}}" }\n');
    const r = await osm(['workflow', 'show', join(tmp.dir, 'undef.yaml'), '-v']);
    expect(r.stdout).toMatch(/│ nowhere\s+│ undefined │ not defined anywhere: renders as an empty string/);
  });
});

describe('validation wording (reference §1.16)', () => {
  it('a workflow missing its kind or a step type fails with `validation error: <field> - <message>`', async () => {
    writeFileSync(join(tmp.dir, 'nokind.yaml'), 'name: nokind\nsteps:\n  - name: a\n    command: echo\n');
    writeFileSync(join(tmp.dir, 'notype.yaml'), 'kind: module\nname: notype\nsteps:\n  - name: a\n    command: echo\n');
    const run = await osm(['run', '-m', join(tmp.dir, 'notype.yaml'), '-t', 'example.com']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`Error: validation error: steps[0].type - step type is required (${join(tmp.dir, 'notype.yaml')}:4)\n`);
    const show = await osm(['workflow', 'show', join(tmp.dir, 'nokind.yaml')]);
    expect(show.code).toBe(1);
    expect(show.stderr.split('\n')).toEqual([
      `Error: validation error: kind - kind is required (must be 'module' or 'flow') (${join(tmp.dir, 'nokind.yaml')}:1)`,
      `validation error: steps[0].type - step type is required (${join(tmp.dir, 'nokind.yaml')}:3)`,
      '',
    ]);
  });
});

describe('--dry-run over several targets', () => {
  it('prints each plan, then one summary of what would run where', async () => {
    const r = await osm(['run', '-m', 'sample-recon', '-t', 'a.example.com', '-t', 'b.example.org', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout.match(/DRY-RUN Mode/g)).toHaveLength(2);
    expect(r.stdout).toContain('  Tactic:      default (threads 10)');
    const summary = r.stdout.slice(r.stdout.indexOf('◆ DRY-RUN summary'));
    expect(summary).toBe(
      '◆ DRY-RUN summary: 2 runs planned (1 workflow × 2 targets), 10 steps; nothing was executed\n' +
        '  sample-recon  a.example.com  → example.com (5 steps)\n' +
        '  sample-recon  b.example.org  → example.org (5 steps)\n',
    );
    const one = await osm(['run', '-m', 'sample-recon', '-t', 'a.example.com', '--dry-run']);
    expect(one.stdout).not.toContain('DRY-RUN summary');
  });
});

describe('not-found messages', () => {
  it('start with the reference wording and help the user on', async () => {
    const r = await osm(['run', '-m', 'sample-recn', '-t', 'example.com']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe('Error: workflow not found: sample-recn');
    expect(r.stderr).toContain('did you mean: sample-recon?');
  });
});

describe('osm agent', () => {
  it('asks an ACP agent from the settings and streams its answer; --list shows the agents', async () => {
    const cfg = await osm(['config', 'set', 'acp.agents.stub.command', process.execPath]);
    expect(cfg.code, cfg.stderr).toBe(0);
    expect((await osm(['config', 'set', 'acp.agents.stub.args.0', join(ROOT, 'test/fixtures/acp/stub-agent.mjs')])).code).toBe(0);
    const list = await osm(['agent', '--list']);
    expect(list.stdout).toMatch(/^\* claude-code\s+claude-code-acp$/m);
    expect(list.stdout).toMatch(/^ {2}stub\s+/m);
    const r = await runOsm(['-b', base, 'agent', '--agent', 'stub', '--cwd', tmp.dir, 'hello', 'there']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`echo: hello there (cwd=${tmp.dir})\n`);
    const j = await osm(['agent', '--agent', 'stub', '--stdin', '--json'], 'piped');
    expect(JSON.parse(j.stdout)).toMatchObject({ agent: 'stub', output: expect.stringMatching(/^echo: piped/), stop_reason: 'end_turn' });
    const bad = await osm(['agent', '--agent', 'stub', 'crash']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('stub agent crashing on purpose');
    expect(bad.stderr).toContain('Error: ACP agent exited (code 3) before answering');
    const unknown = await osm(['agent', '--agent', 'nobody', 'x']);
    expect(unknown.stderr).toMatch(/^Error: unknown ACP agent 'nobody'/);
  });
});

describe('no stub commands', () => {
  it('no CLI source answers "not supported" / "not implemented"', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (e.name.endsWith('.ts')) files.push(join(dir, e.name));
      }
    };
    walk(join(ROOT, 'src/cli'));
    const stubs = files.filter((f) => /not (yet )?(supported|implemented)|coming soon/i.test(readFileSync(f, 'utf8')));
    expect(stubs).toEqual([]);
  });

  it('reference commands osm does not build are absent from --help, and every listed command has help', async () => {
    const help = (await runOsm(['--help'])).stdout;
    const listed = [...help.slice(help.indexOf('Commands:')).matchAll(/^ {2}([a-z_][\w-]*)/gm)].map((m) => m[1]!);
    for (const absent of ['skills', 'client', 'cloud', 'update', 'uninstall']) expect(listed).not.toContain(absent);
    expect(listed).toContain('agent');
    const install = (await runOsm(['install', '--help'])).stdout;
    for (const sub of ['base', 'env', 'validate', 'skills']) expect(install).not.toMatch(new RegExp(`^ {2}${sub}\\b`, 'm'));
    const worker = (await runOsm(['worker', '--help'])).stdout;
    for (const sub of ['eval', 'set']) expect(worker).not.toMatch(new RegExp(`^ {2}${sub}\\b`, 'm'));
    const db = (await runOsm(['db', '--help'])).stdout;
    expect(db).not.toMatch(/^ {2}seed\b/m);
    for (const name of listed.filter((n) => n !== 'help')) {
      const r = await runOsm([name, '--help']);
      expect(r.code, name).toBe(0);
    }
  }, 120_000);
});
