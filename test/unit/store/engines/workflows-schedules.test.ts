/** The workflow index, schedules and webhook run templates on both engines. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_ORG_UUID } from '../../../../src/store/org-constants.js';
import { ENGINES, useStore } from './engines.js';

const wf = (name: string, extra: Partial<{ kind: string; tags: string[]; hidden: boolean; description: string }> = {}) => ({
  name, kind: 'flow', description: '', tags: [] as string[], file_path: `/wf/${name}.yaml`, params: [{ name: 'p', required: true, default: '', generator: '' }],
  required_params: ['p'], step_count: 2, module_count: 1, hidden: false, checksum: 'c', indexed_at: '2024-01-01T00:00:00.000Z', ...extra,
});

describe.each(ENGINES)('workflows on $name', (engine) => {
  const s = useStore(engine);

  it('upserts, lists with kind/search/tag filters in byte order, tags and counts', async () => {
    expect(await s().workflows.upsert(wf('b-flow', { tags: ['recon', 'fast'] }))).toBe('added');
    expect(await s().workflows.upsert(wf('b-flow', { tags: ['recon'], description: 'Subdomain Scan' }))).toBe('updated');
    await s().workflows.upsert(wf('Z-mod', { kind: 'module', tags: ['vuln'] }));
    await s().workflows.upsert(wf('a_hidden', { hidden: true, tags: ['secret'] }));
    const b = await s().workflows.get('b-flow');
    expect(b).toMatchObject({ tags: ['recon'], description: 'Subdomain Scan', hidden: false, params: [{ name: 'p', required: true }], required_params: ['p'] });
    expect((await s().workflows.all()).map((w) => w.name)).toEqual(['Z-mod', 'a_hidden', 'b-flow']);
    expect((await s().workflows.list({}, { offset: 0, limit: 10 })).data.map((w) => w.name)).toEqual(['Z-mod', 'b-flow']);
    expect((await s().workflows.list({ includeHidden: true }, { offset: 1, limit: 1 })).total).toBe(3);
    expect((await s().workflows.list({ search: 'SUBDOMAIN' }, { offset: 0, limit: 10 })).data.map((w) => w.name)).toEqual(['b-flow']);
    expect((await s().workflows.list({ search: '_', includeHidden: true }, { offset: 0, limit: 10 })).data.map((w) => w.name)).toEqual(['a_hidden']);
    expect((await s().workflows.list({ tags: ['vuln', 'recon'] }, { offset: 0, limit: 10 })).total).toBe(2);
    expect((await s().workflows.list({ kind: 'module', tags: ['recon'] }, { offset: 0, limit: 10 })).total).toBe(0);
    expect(await s().workflows.tags()).toEqual(['recon', 'vuln']);
    expect(await s().workflows.countByKind()).toEqual({ flows: 1, modules: 1 });
    expect(await s().workflows.deleteNotIn(['b-flow'])).toBe(2);
    expect((await s().workflows.all()).map((w) => w.name)).toEqual(['b-flow']);
  });
});

describe.each(ENGINES)('schedules on $name', (engine) => {
  const s = useStore(engine);

  it('creates, updates, enables, records runs and lists per org', async () => {
    const a = await s().schedules.create({ name: 'nightly', workflow_name: 'wf', schedule: '0 0 * * *', input_config: { target: 'x' } });
    expect(a).toMatchObject({ trigger_name: 'nightly', trigger_type: 'cron', is_enabled: true, run_count: 0, last_run: null, next_run: null, org_uuid: DEFAULT_ORG_UUID, input_config: { target: 'x' } });
    expect(a.id).toMatch(/^sch_\d+[0-9a-f]{8}$/);
    const b = await s().schedules.create({ name: 'other', workflow_name: 'wf', is_enabled: false, org_uuid: 'org-2' });
    expect(await s().schedules.update(a.id, {})).toEqual(a);
    expect(await s().schedules.update(a.id, { schedule: '*/5 * * * *', input_config: {}, is_enabled: false })).toMatchObject({ schedule: '*/5 * * * *', input_config: {}, is_enabled: false });
    expect(await s().schedules.update('sch_missing', { name: 'x' })).toBeUndefined();
    expect(await s().schedules.setEnabled(a.id, true)).toBe(true);
    expect((await s().schedules.listEnabled()).map((x) => x.id)).toEqual([a.id]);
    await s().schedules.recordRun(a.id, '2024-01-01T00:00:00.000Z');
    await s().schedules.recordRun(a.id, '2024-01-02T00:00:00.000Z', '2024-01-03T00:00:00.000Z');
    const before = (await s().schedules.get(a.id))!;
    expect(before).toMatchObject({ run_count: 2, last_run: '2024-01-02T00:00:00.000Z', next_run: '2024-01-03T00:00:00.000Z' });
    expect(await s().schedules.setNextRun(a.id, null)).toBe(true);
    const after = (await s().schedules.get(a.id))!;
    expect(after.next_run).toBeNull();
    expect(after.updated_at).toBe(before.updated_at);
    expect((await s().schedules.list({ offset: 0, limit: 10 })).total).toBe(2);
    expect((await s().schedules.list({ offset: 0, limit: 10 }, 'org-2')).data.map((x) => x.id)).toEqual([b.id]);
    expect((await s().schedules.list({ offset: 0, limit: 10 }, [])).total).toBe(0);
    expect(await s().schedules.delete(b.id)).toBe(true);
    expect(await s().schedules.delete(b.id)).toBe(false);
  });
});

describe.each(ENGINES)('webhook runs on $name', (engine) => {
  const s = useStore(engine);

  it('creates templates, records triggers, lists newest first and deletes', async () => {
    const a = await s().webhookRuns.create({ workflow_name: 'wf', workflow_kind: 'flow', target: 't', params: { k: 'v' }, options: { timeout: 5 } });
    expect(a).toMatchObject({ priority: 'high', trigger_count: 0, last_triggered_at: null, params: { k: 'v' }, options: { timeout: 5 }, webhook_auth_key_hash: '' });
    const b = await s().webhookRuns.create({ workflow_name: 'wf2', workflow_kind: 'module', target: 'u', priority: 'low' });
    await s().webhookRuns.recordTrigger(a.webhook_uuid, 'run-1');
    await s().webhookRuns.recordTrigger(a.webhook_uuid, 'run-2');
    expect(await s().webhookRuns.getByUuid(a.webhook_uuid)).toMatchObject({ trigger_count: 2, last_run_uuid: 'run-2' });
    const page = await s().webhookRuns.list({ offset: 0, limit: 1 });
    expect(page.total).toBe(2);
    expect(page.data.map((x) => x.id)).toEqual([b.id]);
    expect(await s().webhookRuns.delete(a.webhook_uuid)).toBe(true);
    expect(await s().webhookRuns.getByUuid(a.webhook_uuid)).toBeUndefined();
  });
});
