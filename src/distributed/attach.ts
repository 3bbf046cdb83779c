/**
 * The master of a daemon: `osm serve --master` starts one and attaches it to the AppContext, the
 * routes find it there (no master → `Distributed mode requires … --master flag`).
 */
import type { AppContext } from '../services/context.js';
import { DistributedMaster, type MasterOptions } from './master.js';
import { resolveDistributedConfig } from './redis-config.js';

const masters = new WeakMap<AppContext, DistributedMaster>();

/** Attaches a running master to an app context. */
export function attachMaster(app: AppContext, master: DistributedMaster): void {
  masters.set(app, master);
}

/** Detaches it (before it stops). */
export function detachMaster(app: AppContext): void {
  masters.delete(app);
}

/** The master of this app context, if the daemon runs one. */
export function masterOf(app: AppContext): DistributedMaster | undefined {
  return masters.get(app);
}

export interface StartMasterOptions extends Omit<MasterOptions, 'config'> {
  redisUrl?: string;
  prefix?: string;
}

/**
 * Resolves Redis (`--redis-url` or settings; neither → `redis not configured …`), starts the
 * master and attaches it. `stop()` of the returned handle detaches and closes it.
 */
export async function startMaster(app: AppContext, opts: StartMasterOptions = {}): Promise<{ master: DistributedMaster; stop: () => Promise<void> }> {
  const config = resolveDistributedConfig(app.settings(), { redisUrl: opts.redisUrl, prefix: opts.prefix });
  const d = app.settings().settings.distributed;
  const master = new DistributedMaster(app, { keepCompleted: d.keep_completed, keepFailed: d.keep_failed, ...opts, config });
  await master.start();
  attachMaster(app, master);
  return {
    master,
    stop: async () => {
      detachMaster(app);
      await master.stop();
    },
  };
}
