/**
 * Cron expressions of schedules and workflow triggers: five fields (minute hour day-of-month month
 * day-of-week, Sunday = 0), names such as JAN/MON, `*`, lists, ranges and steps, plus the
 * `@hourly`-style descriptors the reference accepts. node-cron also takes a sixth (seconds) field
 * and a day-of-week 7; both are refused here so an expression means the same thing it does in
 * the reference and in the spec.
 */
import cron from 'node-cron';
import { errors } from '../errors.js';

export const CRON_DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

interface FieldRule {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;

const FIELDS: readonly FieldRule[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day of week', min: 0, max: 6, names: DAYS },
];

const ITEM_RE = /^(\*|([A-Za-z0-9]+)(?:-([A-Za-z0-9]+))?)(?:\/(\d+))?$/;

/** Value of one bound (number or name) or an error text. */
function bound(text: string, rule: FieldRule): number | string {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    return n < rule.min || n > rule.max ? `${rule.name}: ${n} is out of range ${rule.min}-${rule.max}` : n;
  }
  const i = rule.names?.indexOf(text.toUpperCase()) ?? -1;
  if (i < 0) return `${rule.name}: ${JSON.stringify(text)} is not a number${rule.names ? ' or a name' : ''}`;
  return rule === FIELDS[3] ? i + 1 : i;
}

/** Every problem of one field (empty when fine). */
function fieldIssues(value: string, rule: FieldRule): string[] {
  const issues: string[] = [];
  for (const item of value.split(',')) {
    const m = ITEM_RE.exec(item);
    if (!m) {
      issues.push(`${rule.name}: ${JSON.stringify(item)} is not a value, range or step`);
      continue;
    }
    const [, , from, to, step] = m;
    const values: number[] = [];
    for (const b of [from, to]) {
      if (b === undefined) continue;
      const v = bound(b, rule);
      if (typeof v === 'string') issues.push(v);
      else values.push(v);
    }
    if (values.length === 2 && values[0]! > values[1]!) issues.push(`${rule.name}: range ${from}-${to} is backwards`);
    if (step !== undefined) {
      const n = Number(step);
      if (n < 1 || n > rule.max) issues.push(`${rule.name}: step ${step} must be 1-${rule.max}`);
    }
  }
  return issues;
}

/**
 * Checks an expression and returns its five-field form (descriptors expanded, blanks collapsed).
 * Throws `invalidCron` listing every problem.
 */
export function normaliseCron(expression: string): string {
  const text = String(expression ?? '').trim().replace(/\s+/g, ' ');
  if (text === '') throw errors.invalidCron('the expression is empty');
  if (text.startsWith('@')) {
    const mapped = CRON_DESCRIPTORS[text.toLowerCase()];
    if (!mapped) throw errors.invalidCron(`unknown descriptor ${text} (use ${Object.keys(CRON_DESCRIPTORS).join(', ')})`);
    return mapped;
  }
  const parts = text.split(' ');
  if (parts.length !== 5) throw errors.invalidCron(`expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`);
  const issues = parts.flatMap((p, i) => fieldIssues(p, FIELDS[i]!));
  if (issues.length > 0) throw errors.invalidCron(issues.join('; '));
  // node-cron has the last word (it is what fires the schedule), e.g. for impossible dates.
  const detailed = cron.validateDetailed(text);
  if (!detailed.valid) throw errors.invalidCron(detailed.errors.map((e) => e.message).join('; ') || 'rejected by the cron parser');
  try {
    nextRuns(text, 1);
  } catch (err) {
    throw errors.invalidCron((err as Error).message);
  }
  return text;
}

/** True when `expression` is a valid five-field cron expression or descriptor. */
export function isValidCron(expression: string): boolean {
  try {
    normaliseCron(expression);
    return true;
  } catch {
    return false;
  }
}

/** The next `count` fire times after now (server local time zone), as node-cron computes them. */
export function nextRuns(expression: string, count = 1): Date[] {
  const task = cron.createTask(expression, () => undefined);
  try {
    return task.getNextRuns(count);
  } finally {
    void task.destroy();
  }
}

/** The next fire time of a valid expression as an ISO string. */
export function nextCronRun(expression: string): string | null {
  const [next] = nextRuns(normaliseCron(expression), 1);
  return next ? next.toISOString() : null;
}
