import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

// Loop variables render at every nesting (issue 16): each workflow writes the rendered values into
// files of the workspace, which are read back here.
const FIX = join(ROOT, 'test/fixtures/loop-vars');
let base: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-loopvars-'));
});
afterAll(() => cleanup());

async function run(kind: '-m' | '-f', name: string, target: string, extra: string[] = []) {
  const r = await runOsm(['-b', base, '-F', FIX, 'run', kind, name, '-t', target, ...extra]);
  return { ...r, ws: join(base, 'workspaces', target) };
}

/** Sorted lines of a workspace file (parallel writers append in any order). */
function lines(ws: string, file: string): string[] {
  return readFileSync(join(ws, file), 'utf8').trim().split('\n').sort();
}

function text(ws: string, file: string): string {
  return readFileSync(join(ws, file), 'utf8').trim();
}

describe('loop variables at every nesting', () => {
  it('foreach > parallel-steps renders [[var]] in bash and function children', async () => {
    const r = await run('-m', 'lv-foreach-parallel-steps', 'fps.test');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(lines(r.ws, 'one.txt')).toEqual(['one http://a.test 1', 'one http://b.test 2']);
    expect(text(r.ws, 'two-1.txt')).toBe('two http://a.test');
    expect(text(r.ws, 'two-2.txt')).toBe('two http://b.test');
  });

  it('foreach > parallel_commands and parallel_functions', async () => {
    const r = await run('-m', 'lv-foreach-parallel', 'fp.test');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    for (const h of ['a.test', 'b.test', 'c.test']) {
      expect(text(r.ws, `x-${h}.txt`)).toBe(`x ${h}`);
      expect(text(r.ws, `y-${h}.txt`)).toBe(`y ${h}`);
    }
    expect(text(r.ws, 'pf-a.test.txt')).toBe('f a.test');
    expect(text(r.ws, 'pf-b.test.txt')).toBe('f b.test');
    expect(readdirSync(r.ws).some((f) => f.includes('[['))).toBe(false);
  });

  it('foreach > foreach sees both variables (and the inner variable_pre_process still applies)', async () => {
    const r = await run('-m', 'lv-foreach-foreach', 'ff.test');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(lines(r.ws, 'pairs.txt')).toEqual(['a.test:p443', 'a.test:p80', 'b.test:p443', 'b.test:p80']);
  });

  it('parallel-steps > foreach', async () => {
    const r = await run('-m', 'lv-parallel-steps-foreach', 'psf.test');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(lines(r.ws, 'hosts.txt')).toEqual(['host a.test', 'host b.test']);
    expect(text(r.ws, 'other.txt')).toBe('other');
  });

  it('pre_condition, on_success / on_error actions and decision routes of a foreach inner step run per item', async () => {
    const r = await run('-m', 'lv-foreach-routes', 'routes.test');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(lines(r.ws, 'ran.txt')).toEqual(['ran keep.test']);
    expect(lines(r.ws, 'ok.txt')).toEqual(['ok keep.test']);
    expect(lines(r.ws, 'error.txt')).toEqual(['error fail.test']);
    expect(lines(r.ws, 'case.txt')).toEqual(['case keep.test']);
    expect(text(r.ws, 'cond-keep.test.txt')).toBe('cond keep.test');
    expect(existsSync(join(r.ws, 'cond-fail.test.txt'))).toBe(false);
  });

  it('a flow whose modules (file and inline) nest foreach > parallel-steps', async () => {
    const r = await run('-f', 'lv-flow', 'flow.test');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(lines(r.ws, 'one.txt')).toEqual(['one http://a.test 1', 'one http://b.test 2']);
    expect(lines(r.ws, 'inline.txt')).toEqual(['inline a.test']);
  });
});

describe('unrendered placeholders', () => {
  it('a command with [[var]] outside any foreach fails without running', async () => {
    const r = await run('-m', 'lv-outside', 'outside.test');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('unrendered loop variable [[url]]');
    expect(text(r.ws, 'before.txt')).toBe('before');
    expect(existsSync(join(r.ws, 'literal.txt'))).toBe(false);
  });

  it('a function step with [[var]] outside any foreach fails without calling it (exec_cmd would get the literal); lint says so', async () => {
    const r = await run('-m', 'lv-outside-function', 'outside-fn.test');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('unrendered loop variable [[url]] in function');
    expect(existsSync(join(r.ws, 'fn-literal.txt'))).toBe(false);
    const lint = await runOsm(['-b', base, '-F', FIX, 'workflow', 'lint', 'lv-outside-function']);
    expect(lint.code).not.toBe(0);
    expect(lint.stdout + lint.stderr).toMatch(/lv-outside-function\.yaml:6: steps\[0\]\.function: \[\[url\]\] is only valid inside a foreach step \(outside one it is not rendered/);
    expect((await run('-m', 'lv-outside-function', 'dry5.test', ['--dry-run'])).code).toBe(2);
  });

  it('an http step with [[var]] in its url outside any foreach fails without sending; lint says so', async () => {
    const r = await run('-m', 'lv-outside-http', 'outside-http.test');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('unrendered loop variable [[path]] in url');
    expect(r.stdout).toContain('the request was not sent');
    const lint = await runOsm(['-b', base, '-F', FIX, 'workflow', 'lint', 'lv-outside-http']);
    expect(lint.code).not.toBe(0);
    expect(lint.stdout + lint.stderr).toMatch(/lv-outside-http\.yaml:6: steps\[0\]\.url: \[\[path\]\] is only valid inside a foreach step \(outside one it is not rendered/);
  });

  it('lint reports it as an error with file:line, and --dry-run lists it and exits 2', async () => {
    const lint = await runOsm(['-b', base, '-F', FIX, 'workflow', 'lint', 'lv-outside']);
    expect(lint.code).not.toBe(0);
    expect(lint.stdout + lint.stderr).toMatch(/lv-outside\.yaml:9: steps\[1\]\.command: \[\[url\]\] is only valid inside a foreach step/);
    const dry = await run('-m', 'lv-outside', 'dry.test', ['--dry-run']);
    expect(dry.code).toBe(2);
    expect(dry.stdout).toMatch(/✘ error: .*lv-outside\.yaml:9: steps\[1\]\.command: \[\[url\]\]/);
    expect(dry.stderr).toContain('unrendered [[variable]] placeholder');
    // a {{ }} tag that cannot parse fails its step at run time: lint and the dry run say so first
    const syn = await runOsm(['-b', base, '-F', FIX, 'workflow', 'lint', 'lv-template-syntax']);
    expect(syn.code).not.toBe(0);
    expect(syn.stdout + syn.stderr).toMatch(/lv-template-syntax\.yaml:6: steps\[0\]\.command: template rendering failed: .*\(the step fails without running\) \[template-syntax\]/);
    // [[host]] becomes {{host}} before the tags render: inside a tag it nests tags (the run fails on it too)
    expect(syn.stdout + syn.stderr).toMatch(/lv-template-syntax\.yaml:22: steps\[2\]\.step\.command: template rendering failed: unclosed "\{\{"/);
    expect(syn.stdout + syn.stderr).not.toMatch(/lv-template-syntax\.yaml:14/);
    const synDry = await run('-m', 'lv-template-syntax', 'dry3.test', ['--dry-run']);
    expect(synDry.code).toBe(2);
    expect(synDry.stdout).toMatch(/✘ error: .*lv-template-syntax\.yaml:6: steps\[0\]\.command: template rendering failed/);
    // bash tests ([[ -d /tmp ]]) are not placeholders: the engine runs them, so lint and the dry run accept them
    const bashLint = await runOsm(['-b', base, '-F', FIX, 'workflow', 'lint', 'lv-bash-tests']);
    expect(bashLint.code, bashLint.stdout + bashLint.stderr).toBe(0);
    expect(bashLint.stdout + bashLint.stderr).not.toMatch(/foreach-variable|undefined-variable/);
    expect((await run('-m', 'lv-bash-tests', 'dry4.test', ['--dry-run'])).code).toBe(0);
    // the nested workflows have nothing to report
    const ok = await run('-m', 'lv-foreach-routes', 'dry2.test', ['--dry-run']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).not.toMatch(/undefined-variable|foreach-variable/);
  });
});
