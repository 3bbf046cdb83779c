/** Snapshot file names: `<workspace>_<unix seconds>.zip`, and the workspace a file name implies. */
import { basename } from 'node:path';
import { isSafeName } from '../util/fs-safe.js';

/** The file name of a new export of `workspace`. */
export function snapshotFileName(workspace: string, at = new Date()): string {
  return `${workspace}_${Math.floor(at.getTime() / 1000)}.zip`;
}

/** True for a bare, safe `*.zip` file name (what list, download and delete accept). */
export function isSnapshotName(name: string): boolean {
  return isSafeName(name) && name.toLowerCase().endsWith('.zip') && name.length > 4;
}

/**
 * The workspace a snapshot file name implies (reference §7.2): the base name without `.zip`,
 * minus a trailing `_<timestamp>` (10+ digits, `YYYYMMDDTHHMMSSZ` or `YYYY-MM-DDTHH-MM-SSZ`).
 * Returns '' when nothing safe remains.
 */
export function workspaceFromFileName(file: string): string {
  let name = basename(file);
  if (name.toLowerCase().endsWith('.zip')) name = name.slice(0, -4);
  const cut = name.lastIndexOf('_');
  if (cut > 0 && /^(\d{10,}|\d{8}T\d{6}Z|\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z)$/.test(name.slice(cut + 1))) name = name.slice(0, cut);
  return isSafeName(name) ? name : '';
}
