/** Vocabulary shared by the repositories and their callers. */

export type RunStatus = 'pending' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
export type StepStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped';
export type Priority = 'low' | 'normal' | 'high' | 'critical';
export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'info';

export const RUN_STATUSES: readonly RunStatus[] = ['pending', 'queued', 'running', 'completed', 'failed', 'cancelled'];
export const STEP_STATUSES: readonly StepStatus[] = ['pending', 'running', 'completed', 'failed', 'skipped'];
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];
export const TERMINAL_STEP_STATUSES: readonly StepStatus[] = ['completed', 'failed', 'skipped'];
export const SEVERITIES: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'info'];

/** Queue order: a higher rank is claimed first (critical=4 … low=1). */
export const PRIORITY_RANK: Readonly<Record<Priority, number>> = { low: 1, normal: 2, high: 3, critical: 4 };

export interface Page {
  offset: number;
  limit: number;
}

export interface ListResult<T> {
  data: T[];
  total: number;
}

/** Counts returned by the bulk importers; the id lists let callers emit discovered/updated events. */
export interface UpsertResult {
  new: number;
  updated: number;
  unchanged: number;
  /** Row id for every input row, in input order. */
  ids: number[];
  newIds: number[];
  updatedIds: number[];
}
