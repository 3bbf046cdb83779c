/**
 * Imports one tool's output file: the tool's reader streams source records, the tool maps each
 * record to asset and/or vulnerability rows, and two RecordImporters (the same core as the
 * httpx/nuclei imports) store them in batches — one transaction per batch, de-duplicated by the
 * assets' (workspace, asset_value, url) key and the findings' fingerprint, so importing the same
 * file twice adds no row.
 */
import { statSync } from 'node:fs';
import { errors } from '../errors.js';
import type { AssetInput, Store, VulnInput } from '../store/index.js';
import { assetUpsert, AsyncRecordImporter, RecordImporter, vulnUpsert, type ImportCore, type ImportKind, type ImportOptions, type ImportStats, type ImportStore } from './importer.js';
import { feedFileAsync, feedFileSync, type ChunkParser, type ProgressHandler, type ReaderFactory, type SourceItem } from './readers.js';
import { reject, type Mapped } from './records.js';

/** One row a tool record maps to. */
export type ToolRow = { kind: 'asset'; row: Mapped<AssetInput> } | { kind: 'vuln'; row: Mapped<VulnInput> };

/** Per-import settings a mapping may use. */
export interface ToolMapOptions {
  /** Discovery source stored on assets (default: the tool's name). */
  source: string;
  /** Base URL for tools whose output holds paths only (gobuster without -e). */
  baseUrl?: string;
}

/** A tool importer: how its output is read and how a record maps to rows. */
export interface ToolImporter {
  name: string;
  /** The output it reads and how to produce it, e.g. "XML (nmap -oX out.xml)". */
  input: string;
  /** What the rows are, one line (docs and `osm import --help`). */
  maps: string;
  reader: ReaderFactory;
  /** Rows of one record; an empty list skips the record (not an error). */
  rows: RowMapper;
  /** For formats whose records depend on each other: a fresh mapper per import, with rows to add at the end. */
  session?: () => { rows: RowMapper; end(opts: ToolMapOptions): ToolRow[] };
}

export type RowMapper = (record: Record<string, unknown>, raw: string, opts: ToolMapOptions) => ToolRow[];

export interface ToolImportStats {
  tool: string;
  file: string;
  /** Source records read (lines, elements) including bad ones. */
  read: number;
  /** Rows stored as new, updated (a meaningful field changed) or unchanged (only last_seen_at moved). */
  new: number;
  updated: number;
  unchanged: number;
  /** Records that mapped to no row (e.g. a closed port, an informational TLS check). */
  skipped: number;
  /** Records or rows rejected (bad JSON/XML, missing fields). */
  errors: number;
  /** Rows offered to the store. */
  total: number;
  /** Rows dropped as out of the target scope (docs/scope.md). */
  out_of_scope: number;
  assets: ImportStats;
  vulnerabilities: ImportStats;
  /** The first rejected records: line (or element) number and reason. */
  error_lines: { line: number; message: string }[];
}

export interface ToolImportOptions extends ImportOptions {
  source?: string;
  baseUrl?: string;
  onProgress?: ProgressHandler;
}

const MAX_ERROR_LINES = 100;

const assetRows: ImportKind<AssetInput> = { kind: 'asset', map: () => reject('mapped by the tool'), upsert: assetUpsert() };
const vulnRows: ImportKind<VulnInput> = { kind: 'vuln', map: () => reject('mapped by the tool'), upsert: vulnUpsert };

/** One tool file's records mapped into the asset and finding importers (sync or async ones). */
class ToolRun {
  read = 0;
  skipped = 0;
  sourceErrors: { line: number; message: string }[] = [];
  sourceErrorCount = 0;
  readonly parser: ChunkParser;
  private readonly mapOpts: ToolMapOptions;
  private readonly session: { rows: RowMapper; end?(opts: ToolMapOptions): ToolRow[] };

  constructor(
    private readonly assets: ImportCore<AssetInput>,
    private readonly vulns: ImportCore<VulnInput>,
    private readonly tool: ToolImporter,
    private readonly file: string,
    opts: ToolImportOptions,
  ) {
    this.mapOpts = { source: opts.source || tool.name, baseUrl: opts.baseUrl };
    this.session = tool.session?.() ?? { rows: tool.rows };
    this.parser = tool.reader((item) => this.item(item, this.mapOpts));
  }

  private feed(at: number, rows: ToolRow[]): void {
    for (const r of rows) {
      if (r.kind === 'asset') this.assets.mapped(at, r.row);
      else this.vulns.mapped(at, r.row);
    }
  }

  private item(item: SourceItem, mapOpts: ToolMapOptions): void {
    this.read++;
    if ('error' in item) {
      this.sourceErrorCount++;
      if (this.sourceErrors.length < MAX_ERROR_LINES) this.sourceErrors.push({ line: item.at, message: item.error });
      return;
    }
    let rows: ToolRow[];
    try {
      rows = this.session.rows(item.record, item.raw, mapOpts);
    } catch (err) {
      rows = [{ kind: 'asset', row: reject(`cannot map record: ${(err as Error).message}`) }];
    }
    // Session mappers defer rows to the end (grouping), so an empty answer is not a skip there.
    if (rows.length === 0 && !this.tool.session) this.skipped++;
    this.feed(item.at, rows);
  }

  /** Feeds the rows a session mapper kept for the end. */
  endSession(): void {
    if (this.session.end) this.feed(this.read, this.session.end(this.mapOpts));
  }

  /** The run's figures from the two importers' final stats. */
  result(a: ImportStats, v: ImportStats): ToolImportStats {
    const errorLines = [...this.sourceErrors, ...a.error_lines, ...v.error_lines].sort((x, y) => x.line - y.line).slice(0, MAX_ERROR_LINES);
    return {
      tool: this.tool.name,
      file: this.file,
      read: this.read,
      new: a.new + v.new,
      updated: a.updated + v.updated,
      unchanged: a.unchanged + v.unchanged,
      skipped: this.skipped + a.skipped + v.skipped,
      errors: this.sourceErrorCount + a.errors + v.errors,
      total: a.total + v.total,
      out_of_scope: a.out_of_scope + v.out_of_scope,
      assets: a,
      vulnerabilities: v,
      error_lines: errorLines,
    };
  }
}

function checkFile(file: string): void {
  let ok = false;
  try {
    ok = statSync(file).isFile();
  } catch {
    ok = false;
  }
  if (!ok) throw errors.importFileNotFound(file);
}

/** Imports a tool's output file, streamed (CLI and API). */
export async function importToolFile(store: ImportStore, workspace: string, tool: ToolImporter, file: string, opts: ToolImportOptions = {}): Promise<ToolImportStats> {
  if (!workspace) throw errors.workspaceRequired();
  checkFile(file);
  const importOpts: ImportOptions = { ...opts, file };
  const assets = new AsyncRecordImporter(store, workspace, assetRows, importOpts);
  const vulns = new AsyncRecordImporter(store, workspace, vulnRows, importOpts);
  const run = new ToolRun(assets, vulns, tool, file, opts);
  await feedFileAsync(file, run.parser, opts.onProgress, async () => {
    await assets.settle();
    await vulns.settle();
  });
  run.endSession();
  return run.result(await assets.finish(), await vulns.finish());
}

/** The same, synchronously (workflow functions). */
export function importToolFileSync(store: Store, workspace: string, tool: ToolImporter, file: string, opts: ToolImportOptions = {}): ToolImportStats {
  if (!workspace) throw errors.workspaceRequired();
  checkFile(file);
  const importOpts: ImportOptions = { ...opts, file };
  const assets = new RecordImporter(store, workspace, assetRows, importOpts);
  const vulns = new RecordImporter(store, workspace, vulnRows, importOpts);
  const run = new ToolRun(assets, vulns, tool, file, opts);
  feedFileSync(file, run.parser, opts.onProgress);
  run.endSession();
  return run.result(assets.finish(), vulns.finish());
}
