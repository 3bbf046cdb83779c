import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/osm.js');
const FIX = path.join(ROOT, 'test/fixtures/workflows');
const VALID = path.join(FIX, 'valid');

/** Newest mtime among the sources this suite exercises. */
function newestSource(): number {
  const files = [
    ...fs.readdirSync(path.join(ROOT, 'src/workflow')).map((f) => path.join(ROOT, 'src/workflow', f)),
    path.join(ROOT, 'src/cli/actions/workflow.ts'),
    path.join(ROOT, 'src/cli/commands/workflow.ts'),
    path.join(ROOT, 'src/cli/commands/index.ts'),
  ];
  return Math.max(...files.filter((f) => f.endsWith('.ts')).map((f) => fs.statSync(f).mtimeMs));
}

function builtAt(): number {
  try {
    return fs.statSync(path.join(ROOT, 'dist/cli/actions/workflow.js')).mtimeMs;
  } catch {
    return 0;
  }
}

let base: string;

beforeAll(async () => {
  if (builtAt() < newestSource()) {
    // tsc emits even when other folders have type errors, so ignore its exit code and check the output exists.
    await execa('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, reject: false });
  }
  expect(fs.existsSync(path.join(ROOT, 'dist/cli/actions/workflow.js'))).toBe(true);
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
}, 300_000);

afterAll(() => {
  if (base) fs.rmSync(base, { recursive: true, force: true });
});

function osm(args: string[], folder = VALID) {
  return execa('node', [BIN, '-b', base, '-F', folder, '--disable-color', ...args], {
    cwd: ROOT,
    reject: false,
    env: { NO_COLOR: '1', OSM_BASE_FOLDER: '' },
  });
}

describe('osm workflow list', () => {
  it('prints a table and the total line; hidden workflows and hidden folders are left out', async () => {
    const r = await osm(['workflow', 'list']);
    expect(r.exitCode).toBe(0);
    for (const name of ['demo-flow', 'all-steps', 'echo-module', 'simple-bash']) expect(r.stdout).toContain(name);
    expect(r.stdout).not.toContain('secret');
    expect(r.stdout).toMatch(/Name\s+│ Kind\s+│ Steps\s+│ Tags\s+│ Description/);
    expect(r.stdout).toMatch(/│ all-steps\s+│ module │ 12\s+│ recon, test │/);
    expect(r.stdout.trim().split('\n').at(-1)).toBe('◆ Total: 4 workflows (1 flows, 3 modules)');
  });

  it('includes hidden workflows with --all and filters by search and tags', async () => {
    expect((await osm(['workflow', 'list', '--all'])).stdout).toContain('◆ Total: 5 workflows (1 flows, 4 modules)');
    const search = await osm(['workflow', 'ls', 'echo']);
    expect(search.stdout).toContain('echo-module');
    expect(search.stdout).toContain('simple-bash'); // description "Echo the target"
    expect(search.stdout).toContain('◆ Total: 2 workflows (0 flows, 2 modules)');
    const tags = await osm(['workflow', 'list', '--tags', 'demo,nothing']);
    expect(tags.stdout).toContain('◆ Total: 2 workflows (1 flows, 1 modules)');
  });

  it('prints listing items with --json', async () => {
    const r = await osm(['workflow', 'list', '--json']);
    expect(r.exitCode).toBe(0);
    const items = JSON.parse(r.stdout) as Record<string, unknown>[];
    expect(items.map((i) => i.name)).toEqual(['demo-flow', 'all-steps', 'echo-module', 'simple-bash']);
    expect(items[0]).toEqual({
      name: 'demo-flow',
      kind: 'flow',
      description: 'A flow with file modules and an inline module',
      tags: ['demo'],
      file_path: path.join(VALID, 'flows/demo-flow.yaml'),
      params: [{ name: 'target', required: true, default: '', generator: '' }],
      required_params: ['target'],
      step_count: 4,
      module_count: 3,
      checksum: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
  });
});

describe('osm workflow show', () => {
  it('prints the sections of a module', async () => {
    const r = await osm(['workflow', 'show', 'all-steps']);
    expect(r.exitCode).toBe(0);
    for (const section of ['Metadata:', 'Params:', 'Steps:', 'Triggers:']) expect(r.stdout).toContain(section);
    expect(r.stdout).toMatch(/Kind:\s+module/);
    expect(r.stdout).toMatch(/Checksum:\s+sha256:/);
    expect(r.stdout).toMatch(/│ 1\s+│ hello\s+│ bash\s+│ echo "hello \{\{Target\}\}"\s+│ 30m/);
    expect(r.stdout).toMatch(/│ nightly\s+│ cron\s+│ 0 3 \* \* \*/);
  });

  it('prints modules of a flow found through the -flow suffix', async () => {
    const r = await osm(['workflow', 'view', 'demo']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('Modules:');
    expect(r.stdout).toMatch(/│ 2 │ second │ modules\/echo-module\s+│ first\s+│ true/);
  });

  it('prints the detail object with --json', async () => {
    const r = await osm(['workflow', 'show', 'all-steps', '--json']);
    const d = JSON.parse(r.stdout);
    expect(Object.keys(d)).toEqual(expect.arrayContaining(['name', 'kind', 'description', 'tags', 'file_path', 'params', 'steps', 'modules', 'triggers', 'dependencies']));
    expect(d.steps[0]).toEqual({ index: 0, name: 'hello', type: 'bash', command: 'echo "hello {{Target}}"', timeout: '30m', pre_condition: '', exports: { greeting: 'hello' } });
    expect(d.steps[8]).toMatchObject({ name: 'probe', type: 'http', command: 'GET https://{{Target}}/', timeout: '1h30m' });
    expect(d.triggers).toEqual([
      { name: 'nightly', on: 'cron', schedule: '0 3 * * *', topic: '', enabled: true },
      { name: 'on-asset', on: 'event', schedule: '', topic: 'assets.new', enabled: false },
    ]);
    expect(d.dependencies).toEqual({ commands: ['echo', 'cat'], files: ['{{Data}}/wordlists/small.txt'] });
    const flow = JSON.parse((await osm(['workflow', 'show', 'demo-flow', '--json'])).stdout);
    expect(flow.modules[1]).toEqual({ index: 1, name: 'second', path: 'modules/echo-module', depends_on: ['first'], condition: 'true' });
    expect(flow.steps).toEqual([]);
  });

  it('prints the raw file with --yaml, extends and override included', async () => {
    const file = path.join(FIX, 'extends/chain-b.yaml');
    const r = await osm(['workflow', 'show', file, '--yaml']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(fs.readFileSync(file, 'utf8').replace(/\n$/, ''));
    expect(r.stdout).toContain('extends: chain-c');
    expect(r.stdout).toContain('override:');
  });

  it('explains an unknown name on stderr with exit code 1', async () => {
    const r = await osm(['workflow', 'show', 'simple-bsh']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('workflow not found: simple-bsh');
    expect(r.stderr).toContain('did you mean: simple-bash?');
    expect(r.stderr).toContain("osm workflow list");
  });
});

describe('osm workflow validate', () => {
  it('passes a valid workflow by name with exit code 0', async () => {
    const r = await osm(['workflow', 'validate', 'simple-bash']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.trim()).toBe("✔ Workflow 'simple-bash' (module) passed all lint checks");
  });

  it('prints every error as file:line: path: message and exits 1', async () => {
    const r = await osm(['workflow', 'val', 'test/fixtures/workflows/invalid/missing-fields.yaml']);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain('✘ error: test/fixtures/workflows/invalid/missing-fields.yaml:4: steps[0]: bash step must have command, commands, or parallel_commands');
    expect(r.stdout).toContain("test/fixtures/workflows/invalid/missing-fields.yaml:23: preferences.heuristics_check: invalid value 'extreme'");
    expect(r.stdout.match(/✘ error:/g)).toHaveLength(11);
    expect(r.stdout).toContain("✘ Workflow 'missing-fields' (module) failed validation: 11 errors");
  });

  it('reports schema errors with their line, and lint errors', async () => {
    const bad = await osm(['workflow', 'lint', path.join(FIX, 'invalid/bad-step-type.yaml')]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout).toContain('bad-step-type.yaml:11: steps[2].type: must be one of bash, function, parallel-steps');
    const lint = await osm(['workflow', 'lint', path.join(FIX, 'invalid/lint-errors.yaml')]);
    expect(lint.exitCode).toBe(1);
    expect(lint.stdout).toMatch(/lint-errors\.yaml:11: steps\[1\]\.name: duplicate step name 'a'.*\[duplicate-step-name\]/);
  });

  it('keeps warnings from failing, and --disable hides a lint rule', async () => {
    const file = path.join(FIX, 'extends/chain-a.yaml');
    const r = await osm(['workflow', 'validate', file]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("⚠ warning: ");
    expect(r.stdout).toContain("Workflow 'chain-a' (module) passed all lint checks (2 warnings)");
    const quiet = await osm(['workflow', 'validate', file, '--disable', 'extends-ignored']);
    expect(quiet.stdout.trim()).toBe("✔ Workflow 'chain-a' (module) passed all lint checks");
  });

  it('validates a folder recursively with a summary line', async () => {
    const ok = await osm(['workflow', 'validate', VALID]);
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toContain('◆ Validated 5 workflows in test/fixtures/workflows/valid: 5 passed, 0 failed (0 errors, 0 warnings)');
    const bad = await osm(['workflow', 'validate', path.join(FIX, 'invalid')]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout).toMatch(/◆ Validated 7 workflows in .*invalid: 0 passed, 7 failed/);
  });

  it('prints a JSON report with --json', async () => {
    const r = await osm(['workflow', 'validate', 'test/fixtures/workflows/invalid/lint-errors.yaml', '--json']);
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ name: 'lint-errors', kind: 'module', valid: false, errors: 3, warnings: 1 });
    expect(report.issues.map((i: { rule: string }) => i.rule)).toEqual(['undefined-variable', 'invalid-goto', 'duplicate-step-name', 'unknown-dependency']);
  });
});

describe('reference list/validate flags', () => {
  it('list --search, --show-tags and --usage', async () => {
    const r = await osm(['workflow', 'list', '--search', 'echo-module', '--show-tags', '--usage']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('osm run -m echo-module -t <target>');
    expect(r.stdout).not.toContain('simple-bash');
    expect(r.stdout).toMatch(/Tags: /);
  });

  it('validate --format github prints annotations; --fail-fast stops at the first failure', async () => {
    const gh = await osm(['workflow', 'validate', 'test/fixtures/workflows/invalid', '--format', 'github']);
    expect(gh.exitCode).toBe(1);
    expect(gh.stdout).toMatch(/^::error file=test\/fixtures\/workflows\/invalid\/[^,]+\.yaml,line=\d+,title=[a-z-]+::/m);
    const ff = await osm(['workflow', 'validate', 'test/fixtures/workflows/invalid', '--fail-fast', '--format', 'json']);
    expect(ff.exitCode).toBe(1);
    expect(JSON.parse(ff.stdout)).toMatchObject({ total: 1, failed: 1 });
    const bad = await osm(['workflow', 'validate', 'test/fixtures/workflows/invalid', '--format', 'xml']);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain('--format must be pretty, json or github');
  });
});
