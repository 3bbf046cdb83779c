import { describe, expect, it } from 'vitest';
import { expiryFrom } from '../../../src/services/tokens.js';

describe('token expiry durations', () => {
  it('turns s/m/h/d durations into an ISO expiry and never/empty into none', () => {
    const now = Date.parse('2026-01-01T00:00:00.000Z');
    expect(expiryFrom('30d', now)).toBe('2026-01-31T00:00:00.000Z');
    expect(expiryFrom('12h', now)).toBe('2026-01-01T12:00:00.000Z');
    expect(expiryFrom('never', now)).toBeNull();
    expect(expiryFrom('', now)).toBeNull();
  });

  it('refuses durations past the last representable date with a 400, not a RangeError', () => {
    for (const text of ['99999999999d', '9999999999999999999s', '1e400d']) {
      let caught: unknown;
      try { expiryFrom(text); } catch (err) { caught = err; }
      expect(caught, text).toBeInstanceOf(Error);
      expect((caught as Error).message).toContain('Invalid expiry');
      expect((caught as { status?: number }).status).toBe(400);
    }
  });
});
