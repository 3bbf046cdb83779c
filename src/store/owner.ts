/**
 * The owner of a run is a process: its PID and its host (migration 017). A PID is only meaningful
 * on its own host, so a process judges (reconciles, refuses to take over) only runs owned on its
 * host; runs of other hosts sharing the database are theirs.
 */
import { hostname } from 'node:os';

/** This machine's name as runs record it (OSM_HOST_ID overrides, e.g. containers sharing a hostname). */
export const OWNER_HOST = process.env.OSM_HOST_ID?.trim() || hostname();

/** The host to record with `ownerPid` ('' when the run has no owner). */
export const ownerHostOf = (ownerPid: number | undefined): string => (ownerPid ? OWNER_HOST : '');

/** Whether a run's owner runs on another host (its PID cannot be checked here). */
export function ownedOnOtherHost(run: { owner_pid: number; owner_host?: string }): boolean {
  return Boolean(run.owner_pid && run.owner_host && run.owner_host !== OWNER_HOST);
}
