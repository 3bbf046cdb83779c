/** The engine hands its evaluators the database locator: EngineDeps.db when set, else the SQLite file of the store. */
import { describe, expect, it } from 'vitest';
import { workerContext } from '../../../src/engine/scripts.js';
import type { Scope } from '../../../src/engine/types.js';

function scopeWith(deps: Record<string, unknown>): Scope {
  return {
    vars: { Workspace: 'ws', Target: 't.example.com', Output: '/tmp/out' },
    workflow: { name: 'wf', kind: 'module' },
    exec: { runUuid: 'r-1', recorder: { run: { id: 7 } }, printer: { functionLog: () => undefined }, settings: { settings: {} }, signal: new AbortController().signal, deps },
  } as unknown as Scope;
}

describe('workerContext', () => {
  it('passes EngineDeps.db (PostgreSQL) to the evaluator', () => {
    const ctx = workerContext(scopeWith({ store: { path: '/base/db.sqlite' }, db: { engine: 'postgresql', url: 'postgresql://u@h:5432/osm' } }));
    expect(ctx.db).toEqual({ engine: 'postgresql', url: 'postgresql://u@h:5432/osm' });
    expect(ctx).toMatchObject({ workspace: 'ws', runUuid: 'r-1', dbRunId: 7, workflowName: 'wf', target: 't.example.com' });
  });

  it('falls back to the SQLite file of the store without one', () => {
    expect(workerContext(scopeWith({ store: { path: '/base/db.sqlite' } })).db).toEqual({ engine: 'sqlite', path: '/base/db.sqlite' });
  });
});
