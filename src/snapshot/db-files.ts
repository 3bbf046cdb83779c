/**
 * Reads the `.osm-db/<table>.jsonl` files of an extracted snapshot synchronously, row by row
 * (the restore runs inside one SQLite transaction, which cannot span awaits). A bad line aborts
 * the restore: a half-restored workspace is worse than none.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { errors } from '../errors.js';
import { LineSplitter } from '../ingest/lines.js';
import type { Row } from '../store/sql.js';
import type { DumpSource } from '../store/workspace-dump.js';

const MAX_ROW_BYTES = 64 * 1024 * 1024;

/** Rows of one JSONL file (none when the file is absent). */
export function* jsonlRows(file: string): Generator<Row> {
  if (!existsSync(file)) return;
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(1 << 20);
  const pending: { no: number; text: string | null }[] = [];
  const splitter = new LineSplitter((no, text) => pending.push({ no, text }), MAX_ROW_BYTES);
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) splitter.end();
      else splitter.push(buf.subarray(0, n));
      while (pending.length > 0) {
        const { no, text } = pending.shift()!;
        if (text === null) throw errors.validation(`${file}:${no}: row too long`);
        if (text.trim() === '') continue;
        let row: unknown;
        try {
          row = JSON.parse(text);
        } catch (err) {
          throw errors.validation(`${file}:${no}: ${(err as Error).message}`);
        }
        if (row === null || typeof row !== 'object' || Array.isArray(row)) throw errors.validation(`${file}:${no}: not a JSON object`);
        yield row as Row;
      }
      if (n === 0) return;
    }
  } finally {
    closeSync(fd);
  }
}

/** A restore source reading `<dir>/<table>.jsonl`. */
export function folderSource(dir: string): DumpSource {
  return (table) => jsonlRows(join(dir, `${table}.jsonl`));
}
