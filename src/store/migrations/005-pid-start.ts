/**
 * The start time of the process recorded in `runs.current_pid` (Linux: /proc/<pid>/stat field
 * 22, clock ticks since boot). PIDs are reused quickly (pid_max is often 32768): a restarted
 * daemon kills a recorded process group only when this still matches, never an unrelated process
 * that happens to have the same number.
 */
export const sql = /* sql */ `
ALTER TABLE runs ADD COLUMN current_pid_start TEXT NOT NULL DEFAULT '';
`;
