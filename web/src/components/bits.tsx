/** Small display pieces: statuses as words, severities, local times with relative times on hover. */
import { fullTime, localTime, parseTime, relativeTime } from '../lib/format.js';

const STATUS_CLASS: Record<string, string> = {
  completed: 'ok',
  success: 'ok',
  online: 'ok',
  idle: 'ok',
  enabled: 'ok',
  running: 'run',
  busy: 'run',
  active: 'run',
  queued: 'wait',
  pending: 'wait',
  waiting: 'wait',
  delayed: 'wait',
  prioritized: 'wait',
  skipped: 'muted',
  disabled: 'muted',
  failed: 'bad',
  error: 'bad',
  offline: 'bad',
  cancelled: 'warn',
  canceled: 'warn',
};

/** A status as its word, coloured by meaning (colour is never the only cue). */
export function Status({ value }: { value: string | undefined | null }) {
  const v = String(value ?? 'unknown');
  return <span class={`status s-${STATUS_CLASS[v] ?? 'muted'}`}>{v}</span>;
}

export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

export function Severity({ value }: { value: string | undefined | null }) {
  const v = String(value || 'info').toLowerCase();
  return <span class={`sev sev-${(SEVERITIES as readonly string[]).includes(v) ? v : 'info'}`}>{v}</span>;
}

/** A local time; the relative time ("5 minutes ago") shows on hover and to screen readers as a title. */
export function Time({ value }: { value: string | null | undefined }) {
  const d = parseTime(value);
  if (!d) return <span class="muted">—</span>;
  return (
    <time dateTime={d.toISOString()} title={`${relativeTime(value)} · ${fullTime(value)}`}>
      {localTime(value)}
    </time>
  );
}

/** A label with its count as text beside it ("Assets 50"). */
export function Count({ label, value, href }: { label: string; value: number | string | undefined; href?: string }) {
  const body = (
    <>
      <span class="count-label">{label}</span> <span class="count-value">{value ?? '—'}</span>
    </>
  );
  return href ? (
    <a class="count" href={href}>
      {body}
    </a>
  ) : (
    <div class="count">{body}</div>
  );
}
