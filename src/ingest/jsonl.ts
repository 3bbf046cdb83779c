/**
 * File importers: httpx assets, nuclei findings and generic asset JSONL, streamed line by line
 * (async, for the CLI and API) or read in fixed-size chunks (sync, for workflow functions).
 * Memory stays flat for any file size: one read buffer, one line, one batch.
 */
import { statSync } from 'node:fs';
import { errors } from '../errors.js';
import type { AssetInput, Store, VulnInput } from '../store/index.js';
import { customToAsset, type CustomOptions } from './custom.js';
import { httpxToAsset, type HttpxOptions } from './httpx.js';
import { assetUpsert, AsyncRecordImporter, RecordImporter, vulnUpsert, type ImportKind, type ImportOptions, type ImportStats, type ImportStore } from './importer.js';
import { DEFAULT_MAX_LINE_BYTES, forEachLineAsync, forEachLineSync } from './lines.js';
import { nucleiToVuln } from './nuclei.js';

export interface FileImportOptions extends ImportOptions {
  /** Lines longer than this are rejected (default 16 MiB). */
  maxLineBytes?: number;
}

/** httpx records as assets. */
export function httpxKind(opts: HttpxOptions = {}): ImportKind<AssetInput> {
  return { kind: 'asset', map: (r, raw) => httpxToAsset(r, raw, opts), upsert: assetUpsert() };
}

/** nuclei findings as vulnerabilities. */
export const nucleiKind: ImportKind<VulnInput> = { kind: 'vuln', map: nucleiToVuln, upsert: vulnUpsert };

/** Generic asset records. */
export function customKind(opts: CustomOptions = {}): ImportKind<AssetInput> {
  return { kind: 'asset', map: (r, raw) => customToAsset(r, raw, opts), upsert: assetUpsert() };
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

async function runAsync<T>(store: ImportStore, workspace: string, file: string, kind: ImportKind<T>, opts: FileImportOptions): Promise<ImportStats> {
  if (!workspace) throw errors.workspaceRequired();
  checkFile(file);
  const importer = new AsyncRecordImporter(store, workspace, kind, { file, ...opts });
  await forEachLineAsync(file, (no, text) => importer.line(no, text), opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, () => importer.settle());
  return importer.finish();
}

/** Same as runAsync, synchronously, on the synchronous store (workflow functions). */
export function runSync<T>(store: Store, workspace: string, file: string, kind: ImportKind<T>, opts: FileImportOptions = {}): ImportStats {
  if (!workspace) throw errors.workspaceRequired();
  checkFile(file);
  const importer = new RecordImporter(store, workspace, kind, { file, ...opts });
  forEachLineSync(file, (no, text) => importer.line(no, text), opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  return importer.finish();
}

/** Imports an httpx JSONL file (reference §3.5 mapping); bad lines are counted, never fatal. */
export function importAssetsJsonl(store: ImportStore, workspace: string, file: string, opts: FileImportOptions & { source?: string } = {}): Promise<ImportStats> {
  return runAsync(store, workspace, file, httpxKind({ source: opts.source }), opts);
}

/** Imports a nuclei JSONL file; findings are deduplicated by fingerprint. */
export function importVulnsJsonl(store: ImportStore, workspace: string, file: string, opts: FileImportOptions = {}): Promise<ImportStats> {
  return runAsync(store, workspace, file, nucleiKind, opts);
}

/** Imports generic asset JSONL (osm or httpx shaped records, http_record envelopes). */
export function importCustomAssetsJsonl(
  store: ImportStore,
  workspace: string,
  file: string,
  opts: FileImportOptions & CustomOptions = {},
): Promise<ImportStats> {
  return runAsync(store, workspace, file, customKind({ assetType: opts.assetType, source: opts.source }), opts);
}
