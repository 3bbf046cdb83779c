/** Display helpers: local times with relative times, durations, sizes, counts. */

const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const fullFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });
const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** Parses an API timestamp; undefined for empty or invalid ones. */
export function parseTime(v: string | null | undefined): Date | undefined {
  if (!v) return undefined;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** A local date and time ("26 Nov 2026, 15:01:10"). */
export function localTime(v: string | null | undefined): string {
  const d = parseTime(v);
  return d ? dateFmt.format(d) : '—';
}

/** The full local date and time with its time zone (hover text). */
export function fullTime(v: string | null | undefined): string {
  const d = parseTime(v);
  return d ? fullFmt.format(d) : '';
}

/** "3 minutes ago", "in 2 hours". */
export function relativeTime(v: string | null | undefined, now = Date.now()): string {
  const d = parseTime(v);
  if (!d) return '';
  const s = Math.round((d.getTime() - now) / 1000);
  const a = Math.abs(s);
  if (a < 45) return rtf.format(s, 'second');
  if (a < 45 * 60) return rtf.format(Math.round(s / 60), 'minute');
  if (a < 22 * 3600) return rtf.format(Math.round(s / 3600), 'hour');
  if (a < 26 * 86400) return rtf.format(Math.round(s / 86400), 'day');
  if (a < 320 * 86400) return rtf.format(Math.round(s / (30 * 86400)), 'month');
  return rtf.format(Math.round(s / (365 * 86400)), 'year');
}

/** "1.2 s", "3 min 4 s", "2 h 5 min". */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Milliseconds between two API timestamps (to now when the end is missing). */
export function between(start: string | null | undefined, end: string | null | undefined): number | undefined {
  const a = parseTime(start);
  if (!a) return undefined;
  const b = parseTime(end) ?? new Date();
  return b.getTime() - a.getTime();
}

/** "1.5 KiB". */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

const numFmt = new Intl.NumberFormat();

/** A count with thousands separators. */
export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : numFmt.format(n);
}

/** Local calendar day key (YYYY-MM-DD) of a timestamp. */
export function dayKey(d: Date): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}
