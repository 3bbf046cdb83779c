/** The COPY text format and checksum `osm db copy` computes the same way on both engines. */
import { describe, expect, it } from 'vitest';
import { copyLine, copyOrder, copyValue, parseCopyLine, TableChecksum } from '../../../src/store/copy.js';

describe('copy format', () => {
  it('writes values as PostgreSQL COPY text does and reads them back', () => {
    expect(copyValue(null)).toBe('\\N');
    expect(copyValue(12)).toBe('12');
    expect(copyValue(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(copyValue('a\tb\nc\\d\re\bf\fg\vh')).toBe('a\\tb\\nc\\\\d\\re\\bf\\fg\\vh');
    const row = [7, 'tab\there', null, 'back\\slash\nnew', 1.5, '\\N'];
    const line = copyLine(row);
    expect(line.split('\t')).toHaveLength(row.length);
    expect(parseCopyLine(line, [true, false, false, false, true, false])).toEqual(row);
  });

  it('drops NUL characters, which PostgreSQL text cannot hold (both sides of a checksum render the same line)', () => {
    expect(copyValue('a\u0000b\tc')).toBe('ab\\tc');
    expect(copyLine(['x\u0000', 1, null])).toBe('x\t1\t\\N');
  });

  it('checksums ignore row order and catch any changed value or row', () => {
    const sum = (lines: string[]) => {
      const c = new TableChecksum();
      for (const l of lines) c.add(l);
      return c;
    };
    const a = sum(['1\tx', '2\ty', '3\tz']);
    expect(sum(['3\tz', '1\tx', '2\ty']).hex).toBe(a.hex);
    expect(sum(['1\tx', '2\ty', '3\tZ']).hex).not.toBe(a.hex);
    expect(sum(['1\tx', '2\ty']).hex).not.toBe(a.hex);
    expect(a.rows).toBe(3);
    expect(sum([]).hex).toBe('0'.repeat(32));
  });

  it('loads parents first, derived counter tables last, never schema_migrations', () => {
    const order = copyOrder(['workspaces', 'step_results', 'asset_history', 'schema_migrations', 'counters', 'assets', 'runs', 'orgs', 'events']);
    expect(order).toEqual(['orgs', 'runs', 'assets', 'asset_history', 'events', 'step_results', 'workspaces', 'counters']);
  });
});
