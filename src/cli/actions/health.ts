import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { Socket } from 'node:net';
import type { Command } from 'commander';
import { optionsOf } from '../context.js';
import { openApp } from '../app.js';
import { listWorkflowFiles } from '../../workflow/lookup.js';
import { buildBaseEnv } from '../../engine/executor.js';
import { commandExists } from '../../engine/deps-check.js';
import { dbEngineOf, pgTargetFromSettings } from '../../store/pg/config.js';
import { probePg } from '../../store/pg/pool.js';
import { distributedWarnings } from '../../distributed/routing.js';
import { messageOf } from '../../errors.js';
import type { AppContext } from '../../services/context.js';
import { loadSettings } from '../../settings/index.js';
import { WorkflowLoader } from '../../workflow/loader.js';

interface Check {
  section: string;
  name: string;
  ok: boolean;
  detail: string;
  /** A failed optional check is a warning: missing tools only disable the workflows that need them. */
  optional?: boolean;
}

/** Whether a TCP port answers within `ms`. */
function reachable(host: string, port: number, ms = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(ms, () => done(false));
    s.once('error', () => done(false));
    s.connect(port, host, () => done(true));
  });
}

/**
 * `osm health` (reference: "checks folders/binaries; prints a section containing `Folders`"):
 * the folders of the settings (present, writable), the database (opens, integrity quick check),
 * the workflows (how many load, which fail), the commands their `dependencies` name (on PATH or
 * in the binaries folder) and Redis when one is configured. Exit 1 when any check fails.
 */
export async function healthAction(command: Command): Promise<void> {
  const o = optionsOf<{ strict?: boolean }>(command);
  const checks: Check[] = [];
  // A database that cannot be opened is a failed check, not the end of the report.
  let app: AppContext | undefined;
  let openError = '';
  try {
    app = await openApp(o);
  } catch (err) {
    openError = messageOf(err);
  }
  const loaded = app?.settings() ?? loadSettings({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
  const loader = app?.loader ?? new WorkflowLoader(loaded.paths.workflows);
  /** What a master's GET /osm/api/health would warn about (tasks waiting, no worker online or able). */
  let warnings: string[] = [];
  try {
    const p = loaded.paths;
    for (const [name, dir] of [['base', p.base], ['workspaces', p.workspaces], ['workflows', p.workflows], ['data', p.data], ['binaries', p.binaries]] as const) {
      let ok = false;
      let detail = dir;
      try {
        ok = existsSync(dir) && statSync(dir).isDirectory();
        if (ok) accessSync(dir, constants.W_OK);
        else detail = `${dir} (missing)`;
      } catch {
        ok = false;
        detail = `${dir} (not writable)`;
      }
      checks.push({ section: 'Folders', name, ok, detail });
    }
    const db = loaded.settings.database;
    const engine = dbEngineOf(db);
    checks.push({ section: 'Database', name: 'engine', ok: true, detail: engine });
    if (engine === 'postgresql') {
      const target = pgTargetFromSettings(db);
      const probe = await probePg(target);
      checks.push({ section: 'Database', name: 'postgresql', ok: probe.reachable, detail: `${target.display} (${probe.address}) ${probe.reachable ? `reachable, server ${probe.version}` : `not reachable: ${probe.cause}`}` });
    }
    try {
      if (!app) throw new Error(openError);
      const r = await app.repos.maintenance.quickCheck();
      const where = engine === 'postgresql' ? 'integrity' : `${p.db} (quick_check`;
      checks.push({ section: 'Database', name: engine, ok: r === 'ok', detail: engine === 'postgresql' ? `${where}: ${r}` : `${where}: ${r})` });
    } catch (err) {
      checks.push({ section: 'Database', name: engine, ok: false, detail: (err as Error).message });
    }
    const files = existsSync(p.workflows) ? listWorkflowFiles(p.workflows) : [];
    const broken: string[] = [];
    const commands = new Map<string, string[]>();
    for (const f of files) {
      const c = loader.check(f);
      if (!c.workflow) broken.push(f);
      else for (const cmd of c.workflow.dependencies.commands) if (cmd) commands.set(cmd, [...(commands.get(cmd) ?? []), c.workflow.name]);
    }
    checks.push({ section: 'Workflows', name: 'load', ok: broken.length === 0, detail: `${files.length - broken.length} of ${files.length} load${broken.length ? `; failing: ${broken.join(', ')}` : ''}` });
    const pathEnv = buildBaseEnv(p.binaries).PATH ?? '';
    for (const [cmd, users] of [...commands].sort(([a], [b]) => a.localeCompare(b))) {
      const ok = commandExists(cmd, pathEnv);
      const needed = `needed by ${[...new Set(users)].sort().join(', ')}`;
      checks.push({ section: 'Binaries', name: cmd, ok, optional: !o.strict, detail: ok ? 'found' : `not found, ${needed} (install it, or 'osm install binary')` });
    }
    const redis = loaded.settings.redis;
    if (redis.host) {
      const ok = await reachable(redis.host, Number(redis.port));
      checks.push({ section: 'Services', name: 'redis', ok, detail: `${redis.host}:${redis.port}${ok ? '' : ' (unreachable)'}` });
      if (ok) warnings = await distributedWarnings(loaded).catch((err: unknown) => [`cannot read the distributed queue: ${messageOf(err)}`]);
    }
  } finally {
    await app?.close();
  }
  const failed = checks.filter((c) => !c.ok && !c.optional);
  const warned = checks.filter((c) => !c.ok && c.optional);
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ ok: failed.length === 0, checks, ...(warnings.length ? { warnings } : {}) }, null, 2)}\n`);
  } else {
    let section = '';
    const lines: string[] = [];
    for (const c of checks) {
      if (c.section !== section) {
        section = c.section;
        lines.push(`▶ ${section}`);
      }
      lines.push(`  ${c.ok ? '✔' : c.optional ? '⚠' : '⏹'} ${c.name}: ${c.detail}`);
    }
    if (warnings.length) lines.push('▶ Distributed', ...warnings.map((w) => `  ⚠ ${w}`));
    if (warned.length) lines.push(`⚠ ${warned.length} tool(s) missing: the workflows that need them fail, and flows skip those modules (--strict makes this an error)`);
    lines.push(failed.length ? `⚠ ${failed.length} check(s) failed` : '✔ All checks passed');
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  if (failed.length) process.exitCode = 1;
}
