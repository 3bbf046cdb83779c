/**
 * Completion for real: the generated scripts run in the shells they are for, against the built
 * CLI and a temporary base folder. bash is always there; zsh, fish, groff and man are used when
 * installed (the test prints why it skips otherwise).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT, runOsm } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

let tmp: ReturnType<typeof tempDir>;
let base: string;
let env: NodeJS.ProcessEnv;
let runUuid: string;

beforeAll(async () => {
  tmp = tempDir('osm-compl-');
  base = join(tmp.dir, 'base');
  // An `osm` on PATH, as after `npm link`: the scripts call the command being completed.
  const bin = join(tmp.dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'osm'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'osm'), 0o755);
  env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, NO_COLOR: '1', HOME: tmp.dir };
  delete env.OSM_BASE_FOLDER;
  const run = await runOsm(['-b', base, 'run', '-m', 'sample-recon', '-t', 'example.com', '--json'], { env: env as Record<string, string> });
  expect(run.code, run.stderr).toBe(0);
  writeFileSync(join(base, 'workflows', 'my-own-scan.yaml'), 'kind: module\nname: my-own-scan\nsteps:\n  - name: a\n    type: bash\n    command: echo hi\n');
  const q = await runOsm(['-b', base, 'query', 'runs', '--json'], { env: env as Record<string, string> });
  runUuid = JSON.parse(q.stdout).data?.[0]?.run_uuid ?? JSON.parse(q.stdout)[0]?.run_uuid;
  expect(runUuid).toMatch(/^[0-9a-f-]{36}$/);
}, 120_000);

afterAll(() => tmp.cleanup());

/** COMPREPLY after sourcing the bash script with the cursor at the last word. */
function bash(...words: string[]): string[] {
  const script = join(ROOT, 'completions/osm.bash');
  const out = execFileSync('bash', ['-c', 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _osm; printf "%s\\n" "${COMPREPLY[@]}"', '_', script, ...words], {
    env,
    cwd: tmp.dir,
    encoding: 'utf8',
  });
  return out.split('\n').filter(Boolean);
}

describe('bash completion (sourced, completion function called)', () => {
  it('offers commands, subcommands through aliases, and flags', () => {
    const top = bash('osm', '');
    expect(top).toEqual(expect.arrayContaining(['run', 'workflow', 'completion', 'snapshot', 'version']));
    expect(top).not.toContain('__complete');
    expect(top).not.toContain('execute');
    expect(bash('osm', 'wf', '')).toEqual(['list', 'ls', 'show', 'view', 'validate', 'val', 'lint']);
    expect(bash('osm', 'run', '--fl')).toEqual(['--flow']);
    expect(bash('osm', 'run', '--dry')).toEqual(['--dry-run']);
    // global flags after a command
    expect(bash('osm', 'run', '--base-f')).toEqual(['--base-folder']);
  });

  it('offers the choices of a flag', () => {
    expect(bash('osm', 'run', '--heuristics-check', '')).toEqual(['none', 'basic', 'advanced']);
    expect(bash('osm', 'run', '-B', 'g')).toEqual(['gently']);
    expect(bash('osm', 'completion', '')).toEqual(['bash', 'zsh', 'fish']);
  });

  it('offers workflow names from the base folder on the line: modules for -m, flows for -f', () => {
    const modules = bash('osm', '-b', base, 'run', '-m', '');
    expect(modules).toEqual(expect.arrayContaining(['my-own-scan', 'sample-recon']));
    expect(modules).not.toContain('sample-flow');
    const flows = bash('osm', '-b', base, 'run', '-f', '');
    expect(flows).toContain('sample-flow');
    expect(flows).not.toContain('sample-recon');
    expect(bash('osm', '--base-folder', base, 'run', '-t', 'x', '--module', 'my-')).toEqual(['my-own-scan']);
    expect(bash('osm', '-b', base, 'workflow', 'show', 'my-')).toContain('my-own-scan');
  });

  it('offers run ids and workspaces', () => {
    expect(bash('osm', '-b', base, 'query', 'steps', '')).toContain(runUuid);
    expect(bash('osm', '-b', base, 'run', '--resume', runUuid.slice(0, 8))).toEqual([runUuid]);
    expect(bash('osm', '-b', base, 'snapshot', 'export', '')).toContain('example.com');
  });

  it('a missing base folder gives no candidates, no error, and is not created', () => {
    const missing = join(tmp.dir, 'not-there');
    expect(bash('osm', '-b', missing, 'run', '-m', '')).toEqual([]);
    expect(existsSync(missing)).toBe(false);
  });
});

describe('osm __complete', () => {
  it('prints one value per line with a description', async () => {
    const r = await runOsm(['-b', base, '__complete', 'modules'], { env: env as Record<string, string> });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toContain('my-own-scan\tmodule');
  });

  it('never creates a base folder nor prints an error', async () => {
    const missing = join(tmp.dir, 'still-not-there');
    for (const source of ['workflows', 'runs', 'workspaces', 'nonsense']) {
      const r = await runOsm(['-b', missing, '__complete', source], { env: env as Record<string, string> });
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
    }
    expect(existsSync(missing)).toBe(false);
  });

  it('is absent from --help', async () => {
    const r = await runOsm(['--help'], { env: env as Record<string, string> });
    expect(r.stdout).toContain('completion');
    expect(r.stdout).not.toContain('__complete');
  });
});

describe('shipped files are the build of the current program', () => {
  for (const shell of ['bash', 'zsh', 'fish']) {
    it(`completions/osm.${shell} equals \`osm completion ${shell}\``, async () => {
      const r = await runOsm(['completion', shell], { env: env as Record<string, string> });
      expect(r.code).toBe(0);
      expect(readFileSync(join(ROOT, `completions/osm.${shell}`), 'utf8')).toBe(r.stdout);
    });
  }

  it('package.json ships completions and man, and names the man page', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.files).toEqual(expect.arrayContaining(['completions', 'man']));
    expect(pkg.man).toEqual(['./man/osm.1']);
    expect(pkg.scripts.build).toContain('completion/generate.js');
  });
});

describe.runIf(has('zsh'))('zsh completion', () => {
  /** Candidates from the zsh script with the completion builtins replaced by printers. */
  function zsh(...words: string[]): string[] {
    const harness = [
      'compdef() { : }',
      '_describe() { print -l -- "${(@P)4}" }',
      'compadd() { print -l -- "${(@P)2}" }',
      '_files() { print -- "<files>" }',
      `source ${JSON.stringify(join(ROOT, 'completions/osm.zsh'))}`,
      'words=("$@"); CURRENT=${#words}',
      '_osm',
    ].join('\n');
    return execFileSync('zsh', ['-c', harness, '_', ...words], { env, cwd: tmp.dir, encoding: 'utf8' }).split('\n').filter(Boolean);
  }

  it('parses, and offers subcommands, choices and workflow names', () => {
    expect(spawnSync('zsh', ['-n', join(ROOT, 'completions/osm.zsh')]).status).toBe(0);
    expect(zsh('osm', 'wf', '')).toContain('show:show a workflow: metadata, params, steps or modules, triggers');
    expect(zsh('osm', 'run', '-B', '')).toEqual(['aggressive', 'default', 'gently']);
    expect(zsh('osm', '-b', base, 'run', '-m', '')).toEqual(expect.arrayContaining(['my-own-scan:module', 'sample-recon:module']));
    expect(zsh('osm', '-b', base, 'run', '-f', '')).toContain('sample-flow:flow');
    expect(zsh('osm', '-b', base, 'run', '-f', '')).not.toContain('sample-recon:module');
  });
});
if (!has('zsh')) console.log('zsh completion test skipped: zsh is not installed (apt-get install zsh)');

describe.runIf(has('fish'))('fish completion', () => {
  function fish(line: string): string[] {
    const out = execFileSync('fish', ['-c', `source ${join(ROOT, 'completions/osm.fish')}; complete -C ${JSON.stringify(line)}`], { env, cwd: tmp.dir, encoding: 'utf8' });
    return out.split('\n').filter(Boolean).map((l) => l.split('\t')[0]!);
  }

  it('parses, and offers subcommands, flags, choices, workflow names and runs', () => {
    expect(spawnSync('fish', ['-n', join(ROOT, 'completions/osm.fish')]).status).toBe(0);
    expect(fish('osm wf ')).toEqual(expect.arrayContaining(['list', 'show', 'validate', 'lint']));
    expect(fish('osm run --fl')).toEqual(['--flow']);
    expect(fish('osm run --tactic ')).toEqual(['aggressive', 'default', 'gently']);
    expect(fish(`osm -b ${base} run -m `)).toEqual(expect.arrayContaining(['my-own-scan', 'sample-recon']));
    expect(fish(`osm -b ${base} run -f `)).toContain('sample-flow');
    expect(fish(`osm -b ${base} run -f `)).not.toContain('sample-recon');
    expect(fish(`osm -b ${base} query steps `)).toContain(runUuid);
  });
});
if (!has('fish')) console.log('fish completion test skipped: fish is not installed (apt-get install fish)');

describe('man page', () => {
  it.runIf(has('groff'))('formats without warnings', () => {
    const r = spawnSync('groff', ['-man', '-Tutf8', '-ww', '-z', join(ROOT, 'man/osm.1')], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
  });

  it.runIf(has('man'))('is readable with `man ./man/osm.1`', () => {
    const r = spawnSync('man', ['./man/osm.1'], { cwd: ROOT, encoding: 'utf8', env: { ...env, MANPAGER: 'cat', PAGER: 'cat', MANWIDTH: '100' } });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('osm workflow show');
    expect(r.stdout).toContain('--heuristics-check');
  });

  it.runIf(has('mandoc'))('passes mandoc lint (warnings and worse)', () => {
    const r = spawnSync('mandoc', ['-T', 'lint', '-W', 'warning', join(ROOT, 'man/osm.1')], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
  });
});
