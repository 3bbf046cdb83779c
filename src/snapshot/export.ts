/**
 * Writes a workspace snapshot zip: the workspace folder under `<workspace>/` (regular files and
 * folders only — links are not followed, so nothing outside the folder is ever packed) plus the
 * workspace's database rows as JSONL under `<workspace>/.osm-db/<table>.jsonl`. Rows are paged out
 * of the store as the zip consumes them, so neither the files nor the rows are held in memory.
 * Without artifacts only the run state files (run-state.json, logs, …) and the rows are packed.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { createRequire } from 'node:module';
import type { Archiver, EntryData, ZipOptions } from 'archiver';
import type { AsyncStore } from '../store/index.js';
import { DUMP_TABLES, type DumpTable } from '../store/workspace-dump.js';
import { STATE_FILES } from '../engine/state-files.js';

/** The folder inside the workspace that carries the database rows. */
export const DB_FOLDER = '.osm-db';
const PAGE_ROWS = 500;
// The installed archiver (7.x) exports a factory; its @types describe the 8.x classes, so the
// factory is typed here by hand against the Archiver instance type.
const createArchive = createRequire(import.meta.url)('archiver') as (format: 'zip', opts?: ZipOptions) => Archiver;
const STATE_FILE_NAMES = new Set<string>(Object.values(STATE_FILES));

export interface ZipRequest {
  workspace: string;
  /** The workspace folder (may be missing: then only the rows are packed). */
  folder: string;
  /** false: only the run state files and the rows. */
  includeArtifacts: boolean;
}

export interface ZipResult {
  files: number;
  rows: Record<DumpTable, number>;
}

/** The JSONL lines of one table, one page of rows per chunk. */
async function* tableLines(repos: AsyncStore, workspace: string, table: DumpTable, counted: (n: number) => void): AsyncGenerator<string> {
  let after = 0;
  for (;;) {
    const page = await repos.workspaces.dumpPage(workspace, table, after, PAGE_ROWS);
    if (page.rows.length === 0) return;
    counted(page.rows.length);
    after = page.last;
    yield `${page.rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
  }
}

/** Folders and regular files of `root`, sorted, relative with `/` separators; links and devices skipped. */
function walk(root: string, rel = '', out: { rel: string; dir: boolean; mode: number }[] = []): typeof out {
  for (const name of readdirSync(join(root, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    if (r === DB_FOLDER) continue;
    const st = lstatSync(join(root, r));
    if (st.isDirectory()) {
      out.push({ rel: r, dir: true, mode: st.mode & 0o777 });
      walk(root, r, out);
    } else if (st.isFile()) {
      out.push({ rel: r, dir: false, mode: st.mode & 0o777 });
    }
  }
  return out;
}

function isStateFile(rel: string): boolean {
  return !rel.includes('/') && STATE_FILE_NAMES.has(rel);
}

/** Streams the snapshot zip of a workspace into `out`; resolves when the archive is complete. */
export async function writeSnapshotZip(repos: AsyncStore, req: ZipRequest, out: Writable): Promise<ZipResult> {
  const zip = createArchive('zip', { zlib: { level: 6 } });
  const rows = Object.fromEntries(DUMP_TABLES.map((t) => [t, 0])) as Record<DumpTable, number>;
  let files = 0;
  const done = new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('warning', reject);
    out.on('error', reject);
    out.on('close', () => resolve());
  });
  zip.pipe(out);
  zip.append(Buffer.alloc(0), { name: `${req.workspace}/`, type: 'directory', mode: 0o755 } as EntryData);
  let entries: ReturnType<typeof walk> = [];
  try {
    if (lstatSync(req.folder).isDirectory()) entries = walk(req.folder);
  } catch {
    entries = [];
  }
  for (const e of entries) {
    const name = `${req.workspace}/${e.rel}`;
    if (e.dir) {
      if (req.includeArtifacts) zip.append(Buffer.alloc(0), { name: `${name}/`, type: 'directory', mode: e.mode || 0o755 } as EntryData);
    } else if (req.includeArtifacts || isStateFile(e.rel)) {
      zip.file(join(req.folder, e.rel), { name, mode: e.mode || 0o644 });
      files++;
    }
  }
  for (const table of DUMP_TABLES) {
    const lines = Readable.from(tableLines(repos, req.workspace, table, (n) => (rows[table] += n)), { objectMode: false });
    zip.append(lines, { name: `${req.workspace}/${DB_FOLDER}/${table}.jsonl`, mode: 0o644 });
  }
  await zip.finalize();
  await done;
  return { files, rows };
}
