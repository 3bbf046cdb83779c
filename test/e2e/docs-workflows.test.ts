/**
 * Every ```yaml example of docs/workflows.md is a complete workflow: written to a workflows
 * folder under its `# file:` path, the folder passes `osm workflow validate` without an issue, and
 * each example with a `# run:` line completes with coreutils and prints its `# expect:` text.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

interface Example {
  file: string;
  yaml: string;
  run?: string[];
  expect: string[];
}

/** The yaml blocks of a Markdown text with their `# file:`, `# run:` and `# expect:` lines. */
export function yamlExamples(markdown: string): Example[] {
  const out: Example[] = [];
  for (const m of markdown.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)) {
    const yaml = m[1]!;
    const meta = (key: string) => [...yaml.matchAll(new RegExp(`^# ${key}: (.*)$`, 'gm'))].map((x) => x[1]!.trim());
    const file = meta('file')[0];
    if (!file) throw new Error(`a yaml example of docs/workflows.md has no "# file:" line:\n${yaml.slice(0, 200)}`);
    const run = meta('run')[0];
    out.push({ file, yaml, ...(run ? { run: run.split(/\s+/) } : {}), expect: meta('expect') });
  }
  return out;
}

/** The text of the `[output]` blocks a run printed (not the commands it displayed). */
function printedOutput(stdout: string): string {
  const out: string[] = [];
  let inBlock = false;
  for (const line of stdout.split('\n')) {
    if (line === '[output]') inBlock = true;
    else if (inBlock && line.startsWith('  ')) out.push(line.slice(2));
    else inBlock = false;
  }
  return out.join('\n');
}

const DOC = readFileSync(join(ROOT, 'docs/workflows.md'), 'utf8');
const examples = yamlExamples(DOC);
let base: string;
let cleanup: () => void;
let wf: string;

beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-docs-'));
  wf = join(base, 'wf');
  for (const e of examples) {
    mkdirSync(dirname(join(wf, e.file)), { recursive: true });
    writeFileSync(join(wf, e.file), e.yaml);
  }
});
afterAll(() => cleanup());

describe('docs/workflows.md examples', () => {
  it('has examples for modules, flows, foreach, parallel-steps, decisions, imports and triggers', () => {
    expect(examples.length).toBeGreaterThanOrEqual(12);
    for (const key of ['type: foreach', 'type: parallel-steps', 'decision:', 'kind: flow', 'triggers:', 'db_import_', 'exports:', 'params:', 'hooks:']) {
      expect(examples.some((e) => e.yaml.includes(key)), key).toBe(true);
    }
  });

  it('every example passes osm workflow validate without an issue', async () => {
    const r = await runOsm(['-b', base, '-F', wf, 'workflow', 'validate', wf, '--json']);
    const report = JSON.parse(r.stdout);
    expect(report.results.flatMap((x: { issues: { text: string }[] }) => x.issues.map((i) => i.text))).toEqual([]);
    expect(report).toMatchObject({ total: examples.length, failed: 0 });
    expect(r.code).toBe(0);
  });

  for (const e of examples.filter((x) => x.run)) {
    it(`runs ${e.file} (osm run ${e.run!.join(' ')})`, async () => {
      const r = await runOsm(['-b', base, '-F', wf, 'run', ...e.run!]);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toContain('Status: completed');
      for (const text of e.expect) expect(printedOutput(r.stdout)).toContain(text);
    });
  }
});
