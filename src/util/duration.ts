/**
 * Durations as workflows and flags write them: integer seconds (`90`), `<N>d` days, or Go-style
 * durations (`500ms`, `90s`, `5m`, `1h30m`). Returns milliseconds, or undefined for empty/<=0.
 */
export function parseDuration(value: string | number | undefined | null): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? Math.round(value * 1000) : undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^-?\d+(\.\d+)?$/.test(text)) {
    const n = Number(text);
    return n > 0 ? Math.round(n * 1000) : undefined;
  }
  const days = /^(\d+(?:\.\d+)?)d$/.exec(text);
  if (days) {
    const n = Number(days[1]);
    return n > 0 ? Math.round(n * 86_400_000) : undefined;
  }
  const unitMs: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/gy;
  let total = 0;
  let consumed = 0;
  let match: RegExpExecArray | null;
  while ((match = re.exec(text)) !== null) {
    total += Number(match[1]) * unitMs[match[2]!]!;
    consumed = re.lastIndex;
  }
  if (consumed !== text.length || consumed === 0) {
    throw new Error(`invalid duration: ${JSON.stringify(value)} (use seconds, 30s, 5m, 1h30m or 2d)`);
  }
  return total > 0 ? Math.round(total) : undefined;
}

/** Formats milliseconds the way the console prints durations: 45ms, 1.2s, 3m 4s, 1h 2m 3s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const totalSec = Math.floor(ms / 1000);
  const h = Math.floor(totalSec / 3600);
  const m = Math.floor((totalSec % 3600) / 60);
  const s = totalSec % 60;
  return h > 0 ? `${h}h ${m}m ${s}s` : `${m}m ${s}s`;
}

/** Formats milliseconds as a duration text such as `30m`, `1h30m`, `45s` (for workflow detail). */
export function durationText(ms: number | undefined): string {
  if (!ms || ms <= 0) return '';
  let rest = Math.round(ms / 1000);
  if (rest === 0) return `${ms}ms`;
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  const s = rest - m * 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
}
