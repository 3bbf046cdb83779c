import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/**
 * `--log-file` / `--log-file-tmp` (reference global flags): everything the command prints on
 * stdout and stderr is also appended to a file, without colours or cursor movements. Writes are
 * synchronous so nothing is lost when the process exits right after printing.
 */

type Write = typeof process.stdout.write;

let fd: number | undefined;
let originals: { out: Write; err: Write } | undefined;

// eslint-disable-next-line no-control-regex
const CONTROL = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*\u0007/g;

/** A timestamped file name under the system temp folder for --log-file-tmp. */
export function tmpLogPath(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return join(tmpdir(), `osm-${stamp}-${process.pid}.log`);
}

/** Starts teeing stdout and stderr into `file` (created 0600, appended). Returns the absolute path. */
export function startLogFile(file: string): string {
  const path = resolve(file);
  stopLogFile();
  mkdirSync(dirname(path), { recursive: true });
  fd = openSync(path, 'a', 0o600);
  originals = { out: process.stdout.write, err: process.stderr.write };
  process.stdout.write = teeing(process.stdout, originals.out);
  process.stderr.write = teeing(process.stderr, originals.err);
  return path;
}

function teeing(stream: NodeJS.WriteStream, original: Write): Write {
  return function write(this: unknown, chunk: unknown, ...rest: unknown[]): boolean {
    if (fd !== undefined) {
      const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : '';
      const clean = text.replace(CONTROL, '').replace(/\r/g, '');
      if (clean !== '') {
        try {
          writeSync(fd, clean);
        } catch {
          // A full disk must not break the command itself.
        }
      }
    }
    return (original as (...a: unknown[]) => boolean).call(stream, chunk, ...rest);
  } as Write;
}

/** A stream for terminal animations (the spinner): writes to stderr without copying to the log file. */
export function untracedStderr(): NodeJS.WriteStream {
  if (!originals) return process.stderr;
  const raw = originals.err;
  return new Proxy(process.stderr, {
    get(target, prop) {
      if (prop === 'write') return (...a: unknown[]) => (raw as (...x: unknown[]) => boolean).apply(target, a);
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** Restores stdout/stderr and closes the file. */
export function stopLogFile(): void {
  if (originals) {
    process.stdout.write = originals.out;
    process.stderr.write = originals.err;
    originals = undefined;
  }
  if (fd !== undefined) {
    try {
      closeSync(fd);
    } catch {
      /* already closed */
    }
    fd = undefined;
  }
}
