/** `osm scope check`: the decision for one value, the rule and layer that made it. */
import type { Command } from 'commander';
import { openApp } from '../app.js';
import { optionsOf } from '../context.js';
import { createUi } from '../output.js';
import { isOsmError } from '../../errors.js';
import { checkScope } from '../../services/scope.js';

interface ScopeCheckOptions {
  scopeFile?: string;
  workspace?: string;
  workflow?: string;
}

export async function scopeCheckAction(value: string, command: Command): Promise<void> {
  const o = optionsOf<ScopeCheckOptions>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const app = await openApp(o);
  let r;
  try {
    const workflow = o.workflow ? app.loader.load(o.workflow) : undefined;
    r = await checkScope(app, value, { workspace: o.workspace, workflow, scopeFile: o.scopeFile });
  } catch (err) {
    if (isOsmError(err) && err.code === 'OSM_ERR_VALIDATION') process.exitCode = 2;
    throw err;
  } finally {
    await app.close();
  }
  if (!r.in_scope) process.exitCode = 1;
  if (o.json) {
    ui.json(r);
    return;
  }
  const read = r.parsed ? `${r.parsed.kind} ${r.parsed.host}${r.parsed.port !== undefined ? ` port ${r.parsed.port}` : ''}` : 'not a network value';
  (r.in_scope ? ui.success : ui.warn)(`${value}: ${r.in_scope ? 'IN SCOPE' : 'OUT OF SCOPE'}`);
  ui.out(`  read as: ${read}`);
  ui.out(`  ${r.explanation}`);
  if (r.scope.length === 0) ui.out('  (no scope configured: settings scope:, workspace/org scopes, workflow scope: or --scope-file)');
  for (const d of r.layers) {
    const rule = d.rule ? ` — ${d.rule.list} "${d.rule.text}"${d.rule.line ? ` (line ${d.rule.line})` : ''}` : '';
    ui.out(`  ${d.in_scope ? '✔' : '✘'} ${d.layer}: ${d.reason}${rule}`);
  }
}
