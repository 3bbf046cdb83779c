import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getFunction } from '../../../src/engine/functions/registry.js';
import type { FnContext } from '../../../src/engine/js-runtime.js';

/** Calls a library function directly (any spelling) with a silent context. */
export function call(name: string, ...args: unknown[]): unknown {
  const fn = getFunction(name);
  if (!fn) throw new Error(`no function ${name}`);
  return fn({ log: () => {} }, ...args);
}

/** Calls with an explicit context. */
export function callWith(ctx: FnContext, name: string, ...args: unknown[]): unknown {
  const fn = getFunction(name);
  if (!fn) throw new Error(`no function ${name}`);
  return fn(ctx, ...args);
}

/** A fresh temp dir and a cleanup function. */
export function tempDir(): { dir: string; file: (name: string, content?: string) => string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  return {
    dir,
    file: (name, content) => {
      const p = path.join(dir, name);
      if (content !== undefined) {
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, content);
      }
      return p;
    },
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
