/**
 * The JSON-lines log of `osm serve` and `osm worker join` on stdout: `{ level, time, msg, …fields }`
 * per line. Writing to a pipe or a terminal is synchronous in Node (one system call per write,
 * which also wakes the reader), so the lines of a short window (LOG_WINDOW_MS) leave in one write.
 * Each line keeps the time it was logged at. A process that exits (normally, on a signal
 * handler's exit or an uncaught error) writes what it holds first.
 */
/** Lines logged within this many ms are written together. */
export const LOG_WINDOW_MS = 50;

export type JsonLog = (msg: string, fields?: Record<string, unknown>) => void;

export function jsonLineLog(out: { write(chunk: string): unknown } = process.stdout): JsonLog {
  let held = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (held === '') return;
    const text = held;
    held = '';
    out.write(text);
  };
  process.once('exit', flush);
  return (msg, fields = {}) => {
    held += `${JSON.stringify({ level: 30, time: Date.now(), msg, ...fields })}\n`;
    if (!scheduled) {
      scheduled = true;
      setTimeout(flush, LOG_WINDOW_MS).unref();
    }
  };
}
