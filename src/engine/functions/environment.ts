/** Environment functions (reference §10.2 "environment"). */
import type { FnImpl } from './registry.js';
import { argStr, asText } from './helpers.js';

const NAME = /^[^=\0]+$/;

/** The environment functions, by snake_case name (aliases come from the catalogue). */
export const environmentFunctions: Record<string, FnImpl> = {
  os_getenv: (_c, n) => {
    const name = argStr(n);
    return name === null ? '' : (process.env[name] ?? '');
  },
  // Changes the environment of this whole process (and of every command it starts), as the reference.
  os_setenv: (_c, n, v) => {
    const name = argStr(n);
    if (name === null || !NAME.test(name)) return false;
    const value = v === undefined || v === null ? '' : asText(v);
    if (value.includes('\0')) return false;
    process.env[name] = value;
    return true;
  },
};
