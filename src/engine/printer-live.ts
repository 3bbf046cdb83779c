/** Helpers of the run console for live tool output and foreach progress (see printer.ts). */

/** A foreach's progress as the printer tracks it. */
export interface Progress {
  done: number;
  total?: number;
  started: number;
  /** When the last plain progress line was printed, and how many were. */
  lastLine: number;
  lines: number;
}

// Escape sequences a tool may print: CSI (colours, cursor moves, erase), OSC (titles, clipboard,
// links), and the two-byte ones. Tool output is untrusted: only colours may reach the terminal.
// eslint-disable-next-line no-control-regex
const CSI = /\u001b\[[0-?]*[ -/]*[@-~]/g;
// eslint-disable-next-line no-control-regex
const OSC = /\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g;
// eslint-disable-next-line no-control-regex
const ESC2 = /\u001b[@-Z\\-_]?/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001a\u001c-\u001f\u007f\u0080-\u009f]/g;

/**
 * A line of tool output as the terminal may show it: colour codes kept only when `colors`, every
 * other escape sequence and control character dropped, and a `\r`-rewritten line (a progress
 * meter) reduced to what a terminal would finally show.
 */
export function cleanToolLine(line: string, colors: boolean): string {
  let t = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (t.includes('\r')) t = t.slice(t.lastIndexOf('\r') + 1);
  if (t.includes('\u001b') || t.includes('\u009b')) {
    t = t.replace(OSC, '').replace(CSI, (m) => (colors && m.endsWith('m') ? m : ''));
    // What is left of ESC after the kept colour codes: drop it.
    t = colors ? t.replace(/\u001b(?!\[[0-9;]*m)[@-Z\\-_]?/g, '') : t.replace(ESC2, '');
  }
  return t.replace(CONTROL, '');
}

const BAR_CELLS = 20;

/** A remaining time in whole units: `42s`, `3m07s`, `2h05m`. */
function eta(ms: number): string {
  const s = Math.max(1, Math.ceil(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** `scan ▕██████░░░░▏ 600/1000 · 120/s · ETA 3s` (bar) or `scan: 600/1000 (60%) · 120/s · ETA 3s` (plain). */
export function progressText(step: string, p: Progress, now: number, bar: boolean): string {
  const secs = Math.max(0.001, (now - p.started) / 1000);
  const rate = p.done / secs;
  const rateText = rate >= 10 ? `${Math.round(rate)}/s` : `${rate.toFixed(1)}/s`;
  const total = p.total;
  const known = total !== undefined && total > 0;
  const left = known && rate > 0 && p.done < total ? ` · ETA ${eta(((total - p.done) / rate) * 1000)}` : '';
  const count = `${p.done}/${total ?? '?'}`;
  if (bar) {
    const filled = known ? Math.min(BAR_CELLS, Math.round((p.done / total) * BAR_CELLS)) : 0;
    return `${step} ▕${'█'.repeat(filled)}${'░'.repeat(BAR_CELLS - filled)}▏ ${count} · ${rateText}${left}`;
  }
  const pct = known ? ` (${Math.floor((p.done / total) * 100)}%)` : '';
  return `${step}: ${count}${pct} · ${rateText}${left}`;
}
