import { afterEach, describe, expect, it, vi } from 'vitest';
import { isOsmError } from '../../../src/errors.js';
import { isValidCron, nextCronRun, normaliseCron } from '../../../src/scheduler/cron.js';

function cronError(expr: string): string {
  try {
    normaliseCron(expr);
  } catch (err) {
    expect(isOsmError(err)).toBe(true);
    expect((err as { status: number }).status).toBe(400);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(expr)} to be rejected`);
}

describe('normaliseCron', () => {
  it('accepts five fields with lists, ranges, steps and names', () => {
    expect(normaliseCron('*/5 * * * *')).toBe('*/5 * * * *');
    expect(normaliseCron('  0   9-17/2 * JAN-MAR mon-fri ')).toBe('0 9-17/2 * JAN-MAR mon-fri');
    expect(normaliseCron('0,30 0 1,15 * 0')).toBe('0,30 0 1,15 * 0');
  });

  it('expands descriptors', () => {
    expect(normaliseCron('@daily')).toBe('0 0 * * *');
    expect(normaliseCron('@HOURLY')).toBe('0 * * * *');
    expect(normaliseCron('@weekly')).toBe('0 0 * * 0');
  });

  it('checks field ranges (minute 0-59, hour 0-23, dom 1-31, month 1-12, dow 0-6)', () => {
    expect(cronError('61 * * * *')).toBe('Invalid cron expression: minute: 61 is out of range 0-59');
    expect(cronError('0 24 * * *')).toMatch(/hour: 24 is out of range 0-23/);
    expect(cronError('0 0 0 * *')).toMatch(/day of month: 0 is out of range 1-31/);
    expect(cronError('0 0 * 13 *')).toMatch(/month: 13 is out of range 1-12/);
    // node-cron accepts 7 for Sunday; the spec says 0-6.
    expect(cronError('0 0 * * 7')).toMatch(/day of week: 7 is out of range 0-6/);
  });

  it('reports every problem at once', () => {
    const msg = cronError('61 24 * * *');
    expect(msg).toMatch(/minute: 61/);
    expect(msg).toMatch(/hour: 24/);
  });

  it('rejects wrong field counts, junk, bad steps, backwards ranges and unknown descriptors', () => {
    expect(cronError('0 0 * * * *')).toMatch(/expected 5 fields .* got 6/);
    expect(cronError('* * *')).toMatch(/got 3/);
    expect(cronError('')).toMatch(/empty/);
    expect(cronError('*/0 * * * *')).toMatch(/step 0/);
    expect(cronError('30-10 * * * *')).toMatch(/backwards/);
    expect(cronError('a * * * *')).toMatch(/minute: "a" is not a number/);
    expect(cronError('0 0 * FOO *')).toMatch(/month: "FOO"/);
    expect(cronError('@every 5m')).toMatch(/unknown descriptor/);
    expect(cronError('0 0 * * 1;id')).toMatch(/day of week/);
  });

  it('rejects dates that never happen', () => {
    expect(isValidCron('0 0 31 2 *')).toBe(false);
    expect(isValidCron('0 0 29 2 *')).toBe(true);
  });
});

describe('nextCronRun', () => {
  afterEach(() => vi.useRealTimers());

  it('computes the next fire time in local time', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date(2030, 0, 1, 10, 7, 30));
    expect(new Date(nextCronRun('*/15 * * * *')!).getTime()).toBe(new Date(2030, 0, 1, 10, 15, 0).getTime());
    expect(new Date(nextCronRun('0 2 * * *')!).getTime()).toBe(new Date(2030, 0, 2, 2, 0, 0).getTime());
    expect(new Date(nextCronRun('@yearly')!).getTime()).toBe(new Date(2031, 0, 1, 0, 0, 0).getTime());
    // 2030-01-01 is a Tuesday: the next Monday 09:00 is the 7th.
    expect(new Date(nextCronRun('0 9 * * MON')!).getTime()).toBe(new Date(2030, 0, 7, 9, 0, 0).getTime());
  });

  it('throws for an invalid expression', () => {
    expect(() => nextCronRun('nope')).toThrow(/Invalid cron expression/);
  });
});
