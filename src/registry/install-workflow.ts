/**
 * Installs a workflow tree from a source (server-api §8.3): a local folder (copied), a local
 * `.zip`/`.tar.gz`/`.tgz` (extracted safely), an http(s) archive URL (downloaded, extracted) or a
 * git repository (`git clone --depth 1`). Everything lands in a staging folder next to the
 * workflows folder, is checked (at least one YAML file, no links), and only then replaces the
 * workflows folder — whose previous content is kept as `<workflows>.backup-<timestamp>`, unlike
 * the reference, which deletes it.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isInside } from '../util/fs-safe.js';
import { ArchiveError } from './archive-names.js';
import { unpack } from './extract.js';
import { checkHttpUrl, fetchToFile, FetchError } from './fetch.js';
import { gitClone } from './git.js';
import { contentRoot, copyTree, scanTree, swapFolder, type TreeSummary } from './workflow-tree.js';

export const WORKFLOW_DOWNLOAD_MAX_BYTES = 256 * 1024 * 1024;
export const WORKFLOW_DOWNLOAD_TIMEOUT_MS = 5 * 60_000;

export type WorkflowSource =
  | { kind: 'dir'; path: string }
  | { kind: 'archive-file'; path: string }
  | { kind: 'archive-url'; url: string }
  | { kind: 'git'; url: string };

const ARCHIVE = /\.(zip|tar\.gz|tgz)$/i;

/** What kind of source `text` is; throws `unknown source type: …` when it is none. */
export function classifySource(text: string): WorkflowSource {
  const src = text.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(src)) {
    const scheme = src.slice(0, src.indexOf(':')).toLowerCase();
    if (scheme !== 'http' && scheme !== 'https') throw new Error(`unknown source type: ${src}`);
    const url = checkHttpUrl(src);
    if (ARCHIVE.test(url.pathname)) return { kind: 'archive-url', url: url.toString() };
    return { kind: 'git', url: src };
  }
  if (src.startsWith('git@')) return { kind: 'git', url: src };
  if (/^(github\.com|gitlab\.com)\//i.test(src)) return { kind: 'git', url: `https://${src}` };
  let st: ReturnType<typeof statSync> | undefined;
  try {
    st = statSync(src);
  } catch {
    st = undefined;
  }
  if (st?.isDirectory()) return { kind: 'dir', path: resolve(src) };
  if (st?.isFile() && ARCHIVE.test(src)) return { kind: 'archive-file', path: resolve(src) };
  if (src.endsWith('.git')) return { kind: 'git', url: src };
  throw new Error(`unknown source type: ${src}`);
}

/** Text (a source, an error message) as safe to show and log: no user:password in any URL. */
export function redactSource(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, '$1***@');
}

export interface WorkflowInstallOptions {
  source: string;
  workflowsDir: string;
  /** Downloads and clones may reach private addresses (operator, or server.allow_private_registry). */
  allowPrivate: boolean;
  now?: Date;
}

export interface WorkflowInstallResult {
  kind: WorkflowSource['kind'];
  workflow_folder: string;
  backup: string;
  files: number;
  yaml_files: number;
}

async function land(source: WorkflowSource, landing: string, staging: string, workflowsDir: string, allowPrivate: boolean): Promise<void> {
  switch (source.kind) {
    case 'dir': {
      const real = realpathSync(source.path);
      const realWf = realpathOrSelf(workflowsDir);
      if (isInside(real, realWf) || isInside(realWf, real)) throw new Error('source overlaps the workflows folder');
      copyTree(real, landing);
      return;
    }
    case 'archive-file':
      await extractInto(source.path, basename(source.path), landing, staging);
      return;
    case 'archive-url': {
      const file = join(staging, 'download');
      try {
        await fetchToFile(source.url, file, { maxBytes: WORKFLOW_DOWNLOAD_MAX_BYTES, timeoutMs: WORKFLOW_DOWNLOAD_TIMEOUT_MS, allowPrivate });
      } catch (err) {
        throw new Error(`download failed: ${(err as FetchError).message}`);
      }
      await extractInto(file, decodeURIComponent(basename(new URL(source.url).pathname)), landing, staging);
      return;
    }
    case 'git':
      await gitClone(source.url, landing, { allowPrivate });
      rmSync(join(landing, '.git'), { recursive: true, force: true });
      return;
  }
}

async function extractInto(file: string, nameHint: string, landing: string, staging: string): Promise<void> {
  mkdirSync(landing);
  try {
    const kind = await unpack(file, landing, { nameHint, rawName: 'payload', workDir: staging });
    if (kind === 'raw') throw new ArchiveError('not a zip or tar.gz archive');
  } catch (err) {
    if (err instanceof ArchiveError) throw new Error(`unsafe or invalid archive: ${err.message}`);
    throw err;
  }
}

function realpathOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** Fetches, checks and swaps in a workflow tree; throws an Error whose message is the detail. */
export async function installWorkflowSource(opts: WorkflowInstallOptions): Promise<WorkflowInstallResult> {
  const source = classifySource(opts.source);
  const workflows = resolve(opts.workflowsDir);
  mkdirSync(dirname(workflows), { recursive: true });
  // Staged next to the workflows folder so the final rename stays on one file system.
  const staging = mkdtempSync(join(dirname(workflows), `.${basename(workflows)}.install-`));
  try {
    const landing = join(staging, 'content');
    await land(source, landing, staging, workflows, opts.allowPrivate);
    const root = contentRoot(landing);
    const summary: TreeSummary = scanTree(root);
    if (summary.yamlFiles === 0) throw new Error('source does not appear to contain workflows (no .yaml files found)');
    const backup = swapFolder(root, workflows, opts.now);
    return { kind: source.kind, workflow_folder: workflows, backup, files: summary.files, yaml_files: summary.yamlFiles };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
