/** Artifacts, events, schedules, workflows and asset diffs: shapes, filters and pagination. */
import { describe, expect, it } from 'vitest';
import type { WorkflowRow } from '../../../src/store/index.js';
import { memStore, page } from './helpers.js';

describe('artifacts', () => {
  const art = (over: Record<string, unknown> = {}) => ({
    run_id: 1, workspace: 'ws', name: 'report', artifact_path: '/w/ws/report.html', artifact_type: 'report', content_type: 'html',
    size_bytes: 10, line_count: 2, optional: false, description: 'the report', ...over,
  });

  it('upserts on (workspace, name, path, run) and refreshes size, lines and type', () => {
    const store = memStore();
    const first = store.artifacts.upsert(art());
    expect(first.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.optional).toBe(false);
    const second = store.artifacts.upsert(art({ size_bytes: 99, line_count: 7, content_type: 'md', optional: true, description: '' }));
    expect(second).toMatchObject({ id: first.id, size_bytes: 99, line_count: 7, content_type: 'md', optional: true, description: 'the report', created_at: first.created_at });
    expect(store.artifacts.upsert(art({ run_id: 2 })).id).not.toBe(first.id);
    expect(store.artifacts.upsert(art({ id: 'artifact-123', name: 'custom' })).id).toBe('artifact-123');
    expect(store.artifacts.listByRun(1).map((a) => a.name).sort()).toEqual(['custom', 'report']);
    expect(store.artifacts.get('artifact-123')?.name).toBe('custom');
  });

  it('lists with workspace and search filters', () => {
    const store = memStore();
    store.artifacts.upsert(art());
    store.artifacts.upsert(art({ name: 'state', artifact_path: '/w/ws/run-state.json', artifact_type: 'state_file', content_type: 'json', description: '' }));
    store.artifacts.upsert(art({ workspace: 'other', artifact_path: '/w/other/report.html' }));
    expect(store.artifacts.list({}, page()).total).toBe(3);
    expect(store.artifacts.list({ workspace: 'ws' }, page()).total).toBe(2);
    expect(store.artifacts.list({ search: 'run-state' }, page()).data.map((a) => a.name)).toEqual(['state']);
    expect(store.artifacts.list({ workspace: 'ws', search: 'html' }, page()).total).toBe(1);
    expect(store.artifacts.list({}, page(2, 5))).toMatchObject({ total: 3 });
    expect(store.artifacts.list({}, page(2, 5)).data).toHaveLength(1);
  });
});

describe('events', () => {
  it('inserts with a fresh event_id, stringifies data and filters on every field', () => {
    const store = memStore();
    const e = store.events.insert({ topic: 'run.started', source: 'api', data: { scan_id: 'x', target: 't' }, run_id: 'uuid-1', workspace: 'ws', workflow_name: 'wf', name: 'start', data_type: 'scan' });
    expect(e).toMatchObject({ topic: 'run.started', processed: false, processed_at: null, error: '', data: '{"scan_id":"x","target":"t"}' });
    expect(e.event_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(store.events.insert({ topic: 'raw', data: 'plain text' }).data).toBe('plain text');
    const done = store.events.insert({ topic: 'asset.discovered', source: 'executor', processed: true });
    expect(done.processed_at).not.toBeNull();
    store.events.insert({ topic: 'run.failed', source: 'executor', error: 'server not configured' });

    expect(store.events.list({}, page()).data.map((x) => x.topic)).toEqual(['run.failed', 'asset.discovered', 'raw', 'run.started']);
    expect(store.events.list({ topic: 'run.started' }, page()).total).toBe(1);
    expect(store.events.list({ source: 'executor' }, page()).total).toBe(2);
    expect(store.events.list({ workspace: 'ws' }, page()).total).toBe(1);
    expect(store.events.list({ run_id: 'uuid-1' }, page()).total).toBe(1);
    expect(store.events.list({ workflow_name: 'wf' }, page()).total).toBe(1);
    expect(store.events.list({ name: 'start' }, page()).total).toBe(1);
    expect(store.events.list({ processed: true }, page()).total).toBe(1);
    expect(store.events.list({ processed: false }, page()).total).toBe(3);
    expect(store.events.list({ processed: false, source: 'executor' }, page()).total).toBe(1);
    expect(store.events.list({}, page(1, 2)).data.map((x) => x.topic)).toEqual(['asset.discovered', 'raw']);

    expect(store.events.listUnprocessed(10).map((x) => x.topic)).toEqual(['run.started', 'raw', 'run.failed']);
    store.events.markProcessed(e.id, 'no matching trigger');
    expect(store.events.get(e.id)).toMatchObject({ processed: true, error: 'no matching trigger' });
    expect(store.events.get(e.id)?.processed_at).not.toBeNull();
  });
});

describe('schedules', () => {
  it('creates, reads, updates, enables, records runs and deletes', () => {
    const store = memStore();
    const s = store.schedules.create({ name: 'nightly', workflow_name: 'recon', schedule: '0 2 * * *', input_config: { target: 'a.com', params: { x: '1' } } });
    expect(s.id).toMatch(/^sch_\d+[0-9a-f]+$/);
    expect(s).toMatchObject({ trigger_name: 'nightly', trigger_type: 'cron', is_enabled: true, run_count: 0, last_run: null, next_run: null, input_config: { target: 'a.com' } });
    const other = store.schedules.create({ name: 'on-event', workflow_name: 'x', trigger_type: 'event', event_topic: 'assets.new', is_enabled: false });
    expect(other.id).not.toBe(s.id);

    expect(store.schedules.update(s.id, { schedule: '0 3 * * *', input_config: { target: 'b.com' } })).toMatchObject({ schedule: '0 3 * * *', input_config: { target: 'b.com' }, name: 'nightly' });
    expect(store.schedules.update('sch_missing', { name: 'x' })).toBeUndefined();
    expect(store.schedules.listEnabled().map((x) => x.id)).toEqual([s.id]);
    expect(store.schedules.setEnabled(other.id, true)).toBe(true);
    expect(store.schedules.setEnabled('sch_missing', true)).toBe(false);
    expect(store.schedules.listEnabled()).toHaveLength(2);

    store.schedules.recordRun(s.id, '2026-01-01T02:00:00.000Z', '2026-01-02T02:00:00.000Z');
    store.schedules.recordRun(s.id, '2026-01-02T02:00:00.000Z');
    expect(store.schedules.get(s.id)).toMatchObject({ run_count: 2, last_run: '2026-01-02T02:00:00.000Z', next_run: '2026-01-02T02:00:00.000Z' });
    store.schedules.recordRun(s.id, '2026-01-03T02:00:00.000Z', null);
    expect(store.schedules.get(s.id)?.next_run).toBeNull();

    const list = store.schedules.list(page());
    expect(list.total).toBe(2);
    expect(list.data[0]!.id).toBe(other.id); // newest first
    expect(store.schedules.list(page(1, 1)).data.map((x) => x.id)).toEqual([s.id]);
    expect(store.schedules.delete(s.id)).toBe(true);
    expect(store.schedules.delete(s.id)).toBe(false);
    expect(store.schedules.get(s.id)).toBeUndefined();
  });
});

describe('workflows', () => {
  const wf = (name: string, over: Partial<WorkflowRow> = {}): Omit<WorkflowRow, 'id'> => ({
    name, kind: 'module', description: `${name} description`, tags: [], file_path: `/wf/${name}.yaml`,
    params: [{ name: 'threads', required: false, default: '10', generator: '' }], required_params: [], step_count: 2, module_count: 0,
    hidden: false, checksum: `sha256:${name}`, indexed_at: '2026-01-01T00:00:00.000Z', ...over,
  });

  it('upserts, lists with filters, collects tags and counts kinds', () => {
    const store = memStore();
    expect(store.workflows.upsert(wf('subdomain', { tags: ['recon', 'dns'] }))).toBe('added');
    expect(store.workflows.upsert(wf('portscan', { tags: ['network'], description: 'Fast PORT scan' }))).toBe('added');
    expect(store.workflows.upsert(wf('general', { kind: 'flow', module_count: 2, tags: ['recon'] }))).toBe('added');
    expect(store.workflows.upsert(wf('internal', { hidden: true, tags: ['secret'] }))).toBe('added');
    expect(store.workflows.upsert(wf('subdomain', { tags: ['recon', 'dns'], checksum: 'sha256:v2' }))).toBe('updated');

    expect(store.workflows.get('subdomain')).toMatchObject({ checksum: 'sha256:v2', tags: ['recon', 'dns'], hidden: false, params: [{ name: 'threads', default: '10' }] });
    expect(store.workflows.all().map((w) => w.name)).toEqual(['general', 'internal', 'portscan', 'subdomain']);
    expect(store.workflows.list({}, page()).data.map((w) => w.name)).toEqual(['general', 'portscan', 'subdomain']);
    expect(store.workflows.list({ includeHidden: true }, page()).total).toBe(4);
    expect(store.workflows.list({ kind: 'flow' }, page()).data.map((w) => w.name)).toEqual(['general']);
    expect(store.workflows.list({ search: 'port scan' }, page()).data.map((w) => w.name)).toEqual(['portscan']); // matches the description
    expect(store.workflows.list({ search: 'portscanner' }, page()).total).toBe(0);
    expect(store.workflows.list({ search: 'port' }, page()).data.map((w) => w.name)).toEqual(['portscan']);
    expect(store.workflows.list({ search: 'fast' }, page()).total).toBe(1); // description, case-insensitive
    expect(store.workflows.list({ tags: ['dns', 'network'] }, page()).data.map((w) => w.name)).toEqual(['portscan', 'subdomain']);
    expect(store.workflows.list({ tags: ['recon'], kind: 'module' }, page()).total).toBe(1);
    expect(store.workflows.list({}, page(1, 1)).data.map((w) => w.name)).toEqual(['portscan']);
    expect(store.workflows.tags()).toEqual(['dns', 'network', 'recon']);
    expect(store.workflows.countByKind()).toEqual({ flows: 1, modules: 2 });

    expect(store.workflows.deleteNotIn(['general', 'subdomain'])).toBe(2);
    expect(store.workflows.all().map((w) => w.name)).toEqual(['general', 'subdomain']);
  });
});

describe.each(['assetDiffs', 'vulnDiffs'] as const)('diff snapshots (%s)', (repo) => {
  it('stores snapshots and lists them newest first per workspace', () => {
    const store = memStore();
    const diffs = store[repo];
    const d = { from_time: '2026-01-01T00:00:00.000Z', to_time: '2026-01-02T00:00:00.000Z', total_added: 1, total_removed: 0, total_changed: 2, diff_data: '{"added":[]}' };
    const a = diffs.insert({ ...d, workspace_name: 'ws' });
    expect(a).toMatchObject({ workspace_name: 'ws', total_changed: 2, run_id: 0, diff_data: '{"added":[]}' });
    diffs.insert({ ...d, workspace_name: 'ws', run_id: 7 });
    diffs.insert({ ...d, workspace_name: 'other' });
    expect(diffs.list({}, page()).total).toBe(3);
    const ws = diffs.list({ workspace: 'ws' }, page());
    expect(ws.total).toBe(2);
    expect(ws.data[0]!.run_id).toBe(7);
    expect(diffs.list({ workspace: 'ws' }, page(1, 1)).data[0]!.id).toBe(a.id);
    // Each repository reads and writes its own table only.
    const other = store[repo === 'assetDiffs' ? 'vulnDiffs' : 'assetDiffs'];
    expect(other.list({}, page()).total).toBe(0);
  });
});
