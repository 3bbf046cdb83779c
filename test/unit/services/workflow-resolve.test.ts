/**
 * resolveWorkflowFile remembers a name it resolved for a moment (a distributed task is routed,
 * checked and run: three lookups of one name). A remembered file that is gone is not returned,
 * and a miss is never remembered.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAppContext, type SqliteAppContext } from '../../../src/services/context.js';
import { resolveWorkflowFile } from '../../../src/services/workflows.js';

const dirs: string[] = [];
const apps: SqliteAppContext[] = [];
afterEach(() => {
  for (const a of apps.splice(0)) a.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const module = (name: string) => `kind: module\nname: ${name}\nsteps:\n  - name: ok\n    type: bash\n    command: "true"\n`;

describe('resolveWorkflowFile', () => {
  it('finds a workflow added after a miss at once, and never returns a remembered file that was removed', () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-resolve-'));
    dirs.push(base);
    const wf = path.join(base, 'workflows');
    fs.mkdirSync(path.join(wf, 'modules'), { recursive: true });
    const app = createAppContext({ baseFolder: base, workflowFolder: wf });
    apps.push(app);

    expect(() => resolveWorkflowFile(app, 'probe')).toThrow();
    const file = path.join(wf, 'modules', 'probe.yaml');
    fs.writeFileSync(file, module('probe'));
    expect(resolveWorkflowFile(app, 'probe')).toBe(file);
    expect(resolveWorkflowFile(app, 'probe')).toBe(file);

    fs.rmSync(file);
    expect(() => resolveWorkflowFile(app, 'probe')).toThrow();
    // Moved elsewhere in the folder: found there, not at the remembered path.
    const moved = path.join(wf, 'probe.yaml');
    fs.writeFileSync(moved, module('probe'));
    expect(resolveWorkflowFile(app, 'probe')).toBe(moved);
  });
});
