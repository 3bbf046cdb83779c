/** Generation functions (reference §10.2 "generation", plus the spec's timestamp()). */
import { randomUUID } from 'node:crypto';
import type { FnImpl } from './registry.js';
import { argInt } from './helpers.js';
import { randomFrom } from './string.js';

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** The generation functions, by snake_case name (aliases come from the catalogue). */
export const generationFunctions: Record<string, FnImpl> = {
  random_string: (_c, n) => {
    let len = argInt(n, 16);
    if (len <= 0) len = 16;
    return randomFrom(ALNUM, Math.min(len, 1_000_000));
  },
  uuid: () => randomUUID(),
  // Unix seconds, as the spec's `timestamp() (Unix)`.
  timestamp: () => Math.floor(Date.now() / 1000),
};
