/**
 * Which file of a web UI folder answers a URL path: pure path checks plus a realpath containment
 * check, so `..`, encoded `..` or `/`, dotfiles and symlinks leading out of the folder are refused
 * before any file is opened. Shared by the built-in dashboard and a `server.ui_path` folder.
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';

export type UiFile =
  /** A file inside the folder (path relative to it, with `/` separators). */
  | { kind: 'file'; rel: string }
  /** No such file and the path looks like a page: the app's index may answer (client-side route). */
  | { kind: 'fallback'; rel: string }
  /** No such file; `fallback` names the index when one exists (the path has an extension, so it
   * looks like a file rather than a page, but a page route may still answer it: `/workspaces/a.com`). */
  | { kind: 'missing'; fallback?: string }
  /** A path that may never be served (traversal, dotfile, bad encoding): 404 without looking. */
  | { kind: 'refused' };

/** Splits and decodes a URL path into safe segments, or undefined when any segment is unsafe. */
export function safeSegments(urlPath: string): string[] | undefined {
  const raw = urlPath.split('?')[0]!.split('#')[0]!;
  const out: string[] = [];
  const parts = raw.split('/');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === '') {
      // Leading slash, trailing slash (a folder's index) and `//` carry no name.
      continue;
    }
    let seg: string;
    try {
      seg = decodeURIComponent(part);
    } catch {
      return undefined;
    }
    // Dotfiles and `.`/`..` (also when percent-encoded), separators smuggled in one segment, NUL.
    if (seg.startsWith('.') || seg.includes('/') || seg.includes('\\') || seg.includes('\0')) return undefined;
    out.push(seg);
  }
  return out;
}

function isFileInside(root: string, rootReal: string, rel: string): boolean {
  const full = join(root, rel);
  if (!existsSync(full)) return false;
  let real: string;
  try {
    real = realpathSync(full);
  } catch {
    return false;
  }
  // A symlink may point anywhere: only what really lies inside the folder is served.
  if (real !== rootReal && !real.startsWith(rootReal.endsWith(sep) ? rootReal : rootReal + sep)) return false;
  try {
    return statSync(real).isFile();
  } catch {
    return false;
  }
}

/**
 * Resolves a URL path against a UI folder: the file itself, then clean URLs (`/scans` →
 * `scans.html`, `/scans/` → `scans/index.html`), then the SPA fallback for page-like paths.
 */
export function resolveUiFile(root: string, urlPath: string): UiFile {
  const segs = safeSegments(urlPath);
  if (!segs) return { kind: 'refused' };
  let rootReal: string;
  try {
    rootReal = realpathSync(root);
  } catch {
    return { kind: 'missing' };
  }
  const rel = segs.join('/');
  const candidates = rel === '' ? ['index.html'] : [rel, `${rel}.html`, `${rel}/index.html`];
  for (const c of candidates) if (isFileInside(root, rootReal, c)) return { kind: 'file', rel: c };
  const last = segs[segs.length - 1] ?? '';
  const index = isFileInside(root, rootReal, 'index.html');
  if (/\.[A-Za-z0-9]{1,8}$/.test(last)) return index ? { kind: 'missing', fallback: 'index.html' } : { kind: 'missing' };
  return index ? { kind: 'fallback', rel: 'index.html' } : { kind: 'missing' };
}

/** True when a folder holds an `index.html` (a usable `server.ui_path`). */
export function hasIndex(dir: string | undefined): dir is string {
  if (!dir) return false;
  try {
    return statSync(join(dir, 'index.html')).isFile();
  } catch {
    return false;
  }
}
