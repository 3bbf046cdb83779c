import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const FIX = join(ROOT, 'test/fixtures/plan-decisions');
let base: string;
let cleanup: () => void;

function osm(args: string[]) {
  return runOsm(['-b', base, '-F', FIX, ...args]);
}

beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-plan-decisions-'));
});
afterAll(() => cleanup());

describe('osm run --dry-run follows decisions', () => {
  it('shows the route: the matched case, its inline work, truthy conditions, jumped-over steps and _end', async () => {
    const r = await osm(['run', '-m', 'decision-route', '-t', 'example.com', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('DRY-RUN');
    expect(r.stdout).toContain('decision-route');
    for (const name of ['detect', 'deep-scan', 'generic-scan', 'quick-scan', 'extra-scan', 'report', 'after-end']) expect(r.stdout).toContain(name);
    expect(r.stdout).toContain('Route:       3 of 7 steps reached');
    expect(r.stdout).toContain('⤷ switch "fast" → case "fast" → goto quick-scan');
    expect(r.stdout).toMatch(/▶ Inline: decision-inline-bash \(bash\)\n\s+\$ echo going fast on example\.com/);
    expect(r.stdout).toContain("◌ Step 2: deep-scan (not reached: decision goto quick-scan at step 'detect')");
    expect(r.stdout).toContain('⤷ if {{detected}} == true → true → goto report');
    expect(r.stdout).toContain('decision-condition-function');
    expect(r.stdout).toContain('(not evaluated in a dry run: calls file_length(); counts as false)');
    expect(r.stdout).toContain("◌ Step 5: extra-scan (not reached: decision goto report at step 'quick-scan')");
    expect(r.stdout).toContain("◌ Step 7: after-end (not reached: decision goto _end at step 'report')");
    // Nothing ran.
    expect(r.stdout).not.toMatch(/^(DEEP|GENERIC|EXTRA)-SCAN-RAN$/m);
    expect(existsSync(join(base, 'workspaces/example.com/QUICK-SCAN-RAN'))).toBe(false);
  });

  it('a param changes the route; workflow show --json carries it', async () => {
    const r = await osm(['run', '-m', 'decision-route', '-t', 'example.com', '--dry-run', '-p', 'mode=deep']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('⤷ switch "deep" → case "deep" → goto deep-scan');
    expect(r.stdout).toContain('▶ Step 2: deep-scan (bash)');
    expect(r.stdout).toContain('Route:       5 of 7 steps reached');

    const show = await osm(['workflow', 'show', 'decision-route', '-t', 'example.com', '--json']);
    expect(show.code, show.stderr).toBe(0);
    const plan = JSON.parse(show.stdout) as { route: { reached: number; entries: { kind: string; name: string }[] }; steps: { name: string; notReached?: string }[] };
    expect(plan.route.reached).toBe(3);
    expect(plan.route.entries.map((e) => `${e.kind}:${e.name}`)).toEqual([
      'step:detect',
      'not-reached:deep-scan',
      'not-reached:generic-scan',
      'step:quick-scan',
      'not-reached:extra-scan',
      'step:report',
      'not-reached:after-end',
    ]);
    expect(plan.steps.find((s) => s.name === 'after-end')!.notReached).toBe("decision goto _end at step 'report'");
  });

  it('a flow recurses into its modules with the same routing', async () => {
    const r = await osm(['run', '-f', 'decision-flow', '-t', 'example.com', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('DRY-RUN');
    expect(r.stdout).toContain('decision-flow');
    expect(r.stdout).toContain('route: 3 of 7 steps reached');
    expect(r.stdout).toContain("    ◌ Step 3: generic-scan (not reached: decision goto quick-scan at step 'detect')");
  });
});
