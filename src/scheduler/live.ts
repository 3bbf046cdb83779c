/**
 * The scheduler running in this process for an app context, so routes and services can
 * re-register a schedule after a change or hand over an emitted event. Absent when the daemon runs
 * with `--no-schedule` and in plain CLI commands.
 */
import type { AppContext } from '../services/context.js';

/** What services may ask of the live scheduler. */
export interface LiveScheduler {
  /** Re-reads one schedule row and (re-)registers or drops its trigger. */
  syncSchedule(id: string): Promise<void>;
  /** Re-reads the triggers declared in workflow files (after a workflows refresh or upload). */
  reloadWorkflowTriggers(): void;
  /** Looks at new events now instead of at the next poll. */
  poke(): void;
  status(): { enabled: boolean; running: boolean; workflow_count: number; trigger_count: number };
  workflows(): { workflows: unknown[]; triggers: unknown[] };
}

const live = new WeakMap<AppContext, LiveScheduler>();

/** Records (or, with undefined, forgets) the scheduler of `app`. */
export function setLiveScheduler(app: AppContext, scheduler: LiveScheduler | undefined): void {
  if (scheduler) live.set(app, scheduler);
  else live.delete(app);
}

/** The scheduler running for `app`, if any. */
export function liveScheduler(app: AppContext): LiveScheduler | undefined {
  return live.get(app);
}

/** In distributed mode: whether this master runs the schedules of its Redis prefix. */
export interface SchedulerRole {
  role: 'leader' | 'standby';
  /** The Redis key of the scheduler lock. */
  lock_key: string;
  /** Id (`host:pid:random`) of the master holding the lock, null when none does. */
  holder: string | null;
}

const roles = new WeakMap<AppContext, () => SchedulerRole>();

/** Records (or, with undefined, forgets) how to read the scheduler role of `app`. */
export function setSchedulerRole(app: AppContext, read: (() => SchedulerRole) | undefined): void {
  if (read) roles.set(app, read);
  else roles.delete(app);
}

/** The scheduler role of `app` in distributed mode, undefined otherwise. */
export function schedulerRole(app: AppContext): SchedulerRole | undefined {
  return roles.get(app)?.();
}
