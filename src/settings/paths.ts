/**
 * Path templating in settings (workflow-engine §4): `{{base_folder}}` is substituted textually,
 * then `$VAR`/`${VAR}` are expanded from the environment, then a leading `~`. Relative results
 * are taken relative to the base folder, not the current directory, so a file means the same
 * thing wherever `osm` is started.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { defaultSettings, type Settings } from './schema.js';

export interface ResolvedPaths {
  base: string;
  settingsFile: string;
  workspaces: string;
  workflows: string;
  data: string;
  uploads: string;
  binaries: string;
  configs: string;
  scripts: string;
  snapshot: string;
  markdownTemplates: string;
  agentConfigs: string;
  db: string;
  ui: string;
}

/** Expands `$VAR` and `${VAR}` from `env` (unset variables become empty, like Go's os.ExpandEnv). */
export function expandEnv(value: string, env: NodeJS.ProcessEnv = process.env): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, braced: string | undefined, bare: string | undefined) => env[(braced ?? bare)!] ?? '');
}

/** Expands a leading `~` or `~/` to the home directory. */
export function expandHome(value: string): string {
  if (value === '~') return homedir();
  if (value.startsWith('~/')) return join(homedir(), value.slice(2));
  return value;
}

/**
 * Resolves one settings path: `{{base_folder}}`, env vars, `~`, then absolute (relative to base).
 * Empty input gives `fallback` resolved the same way.
 */
export function resolveSettingsPath(value: string, base: string, fallback = ''): string {
  const raw = value.trim() === '' ? fallback : value;
  if (raw.trim() === '') return '';
  const substituted = raw.replace(/\{\{\s*base_folder\s*\}\}/g, base);
  const expanded = expandHome(expandEnv(substituted));
  return isAbsolute(expanded) ? resolve(expanded) : resolve(base, expanded);
}

/**
 * Resolves every path of `settings` in place (environments, server.ui_path, database.db_path,
 * cloud paths) and returns the summary others use. `workflowFolder` (-F) replaces the workflows path.
 */
export function resolveAllPaths(settings: Settings, base: string, settingsFile: string, workflowFolder?: string): ResolvedPaths {
  const env = settings.environments;
  // Empty values fall back to the schema's defaults (declared once, in schema.ts).
  const d = defaultSettings();
  const r = (v: string, fb: string) => resolveSettingsPath(v, base, fb);
  for (const key of Object.keys(d.environments) as (keyof Settings['environments'])[]) {
    env[key] = r(env[key], d.environments[key]);
  }
  if (workflowFolder) env.workflows = resolve(expandHome(workflowFolder));
  settings.server.ui_path = r(settings.server.ui_path, d.server.ui_path);
  settings.database.db_path = r(settings.database.db_path, d.database.db_path);
  settings.cloud.cloud_path = r(settings.cloud.cloud_path, d.cloud.cloud_path);
  settings.cloud.cloud_settings = r(settings.cloud.cloud_settings, d.cloud.cloud_settings);
  return {
    base,
    settingsFile,
    workspaces: env.workspaces,
    workflows: env.workflows,
    data: env.external_data,
    uploads: join(env.external_data, 'uploads'),
    binaries: env.external_binaries_path,
    configs: env.external_configs,
    scripts: env.external_scripts,
    snapshot: env.snapshot,
    markdownTemplates: env.markdown_report_templates,
    agentConfigs: env.external_agent_configs,
    db: settings.database.db_path,
    ui: settings.server.ui_path,
  };
}
