/** Run and step changes as the events stream sends them (no DOM, unit-tested). */

export interface RunChange {
  kind: 'run';
  id?: number;
  run_uuid: string;
  status: string;
  workflow_name?: string;
  target?: string;
  workspace?: string;
  completed_steps?: number;
  total_steps?: number;
}

export interface StepChange {
  kind: 'step';
  run_uuid: string;
  step_name: string;
  status: string;
  exit_code?: number;
  duration_ms?: number;
}

export type LiveChange = RunChange | StepChange;
export type LiveMode = 'connecting' | 'live' | 'polling';

/** Reads one message of the stream as a run or step change (anything else is ignored). */
export function parseChange(data: string): LiveChange | undefined {
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(data) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!j || typeof j !== 'object' || typeof j.run_uuid !== 'string') return undefined;
  if (typeof j.step_name === 'string') return { kind: 'step', ...(j as object) } as StepChange;
  if (typeof j.status === 'string') return { kind: 'run', ...(j as object) } as RunChange;
  return undefined;
}
