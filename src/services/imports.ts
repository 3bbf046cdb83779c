/** `osm import <tool> <file>`: one tool's output file into a workspace, through the tool importer table. */
import { resolve } from 'node:path';
import { errors } from '../errors.js';
import { importToolFile, toolImporter, toolNames, type ToolImportStats } from '../ingest/index.js';
import type { ProgressHandler } from '../ingest/readers.js';
import type { AppContext } from './context.js';
import { workspaceImportScope } from './scope.js';
import type { ScopeCounts, ScopeSpec } from '../scope/index.js';

export interface ToolImportRequest {
  tool: string;
  file: string;
  workspace: string;
  /** Discovery source stored on assets (default: the tool's name). */
  source?: string;
  /** Base URL for gobuster output without -e. */
  baseUrl?: string;
  onProgress?: ProgressHandler;
  /** An extra scope (`osm import --scope-file`) on top of the workspace's scope from the settings. */
  scope?: ScopeSpec;
}

/** Imports the file; unknown tools and workspaces that are not plain names are refused before reading. */
export async function importTool(app: AppContext, req: ToolImportRequest): Promise<ToolImportStats & { workspace: string; scope?: Omit<ScopeCounts, never> }> {
  const tool = toolImporter(req.tool);
  if (!tool) throw errors.unknownImportTool(req.tool, toolNames().join(', '));
  const workspace = (req.workspace ?? '').trim();
  if (!workspace) throw errors.workspaceRequired();
  // Workspace names become folder names elsewhere (snapshots, Output): keep them plain.
  if (/[/\\\0]/.test(workspace) || workspace === '.' || workspace === '..' || workspace.length > 255) throw errors.invalidWorkspaceName();
  if (req.baseUrl !== undefined && !/^https?:\/\/[^\s]+$/i.test(req.baseUrl)) throw errors.validation(`--base-url must be an http(s) URL, got ${JSON.stringify(req.baseUrl)}`);
  // Target scope (docs/scope.md): rows whose value or URL is out of scope are dropped and counted.
  const scope = await workspaceImportScope(app, workspace, `import:${tool.name}`, req.scope);
  const stats = await importToolFile(app.repos, workspace, tool, resolve(req.file), {
    source: req.source,
    baseUrl: req.baseUrl,
    eventSource: 'cli',
    onProgress: req.onProgress,
    ...(scope ? { scope } : {}),
  });
  return { workspace, ...stats, ...(scope ? { scope: { dropped: scope.counts.dropped, by_source: scope.counts.by_source, samples: scope.counts.samples } } : {}) };
}
