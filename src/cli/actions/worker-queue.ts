/** `osm worker queue list`: the runs waiting in the database queue, oldest first. */
import type { Command } from 'commander';
import { openApp } from '../app.js';
import { optionsOf } from '../context.js';
import { colorEnabled, createUi, renderTable } from '../output.js';
import { intFlag } from './assets.js';

export async function queueList(command: Command): Promise<void> {
  const o = optionsOf<{ limit?: string }>(command);
  const limit = intFlag(o.limit, '--limit', 50);
  const app = await openApp(o);
  try {
    const { data, total } = await app.repos.runs.list({ status: 'queued' }, { offset: 0, limit: 10_000 });
    // The store lists newest first; a queue reads oldest first.
    const rows = data.slice().reverse().slice(0, limit);
    const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
    if (o.json) {
      ui.json({ data: rows, total });
      return;
    }
    if (rows.length === 0) {
      ui.info('The queue is empty');
      return;
    }
    ui.out(await renderTable(['ID', 'Run UUID', 'Workflow', 'Target', 'Priority', 'Queued at'], rows.map((r) => [r.id, r.run_uuid, r.workflow_name, r.target, r.priority, r.created_at]), { color: colorEnabled(o.disableColor) }));
    ui.out(`${total} queued run(s)`);
  } finally {
    await app.close();
  }
}
