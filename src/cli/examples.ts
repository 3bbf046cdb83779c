/**
 * `-H/--usage-example` and `--full-usage-example` (reference global flags): worked examples
 * per command. `-H` shows the examples of the command on the command line (or an overview);
 * `--full-usage-example` shows all of them.
 */

export const USAGE_EXAMPLES: Record<string, { title: string; lines: string[] }> = {
  run: {
    title: 'Run flows and modules',
    lines: [
      'osm run -f general -t example.com                  # a flow against one target',
      'osm run -m subdomain -m probing -t example.com     # modules in sequence',
      'osm run -m recon -t x.com -F ./workflows -b ~/base -p threads=20',
      'osm run -f general -T targets.txt -c 4             # 4 targets at a time',
      'cat targets.txt | osm run -m probing               # targets from stdin',
      'osm run -m probing -T big.txt --chunk-size 500     # print the chunks',
      'osm run -m probing -T big.txt --chunk-size 500 --chunk-part 2',
      'osm run -f general -t x.com --dry-run              # the plan, nothing executed',
      'osm run -f general -t x.com --timeout 2h --json    # a JSON record for scripts',
      'osm run -m probing -t x.com --server http://127.0.0.1:8002 --api-key $KEY',
      'osm run --resume 42                                # continue a failed run',
      'osm run -m probing -t x.com --queue && osm run --queue-run -c 2',
    ],
  },
  serve: {
    title: 'The HTTP daemon',
    lines: [
      'osm serve                                           # API on the settings host/port (default 8002)',
      'osm serve --port 9000 -A                            # no authentication (local use only)',
      'osm serve --master --redis-url redis://127.0.0.1:6379',
    ],
  },
  workflow: {
    title: 'Workflows',
    lines: [
      'osm workflow list --tags recon',
      'osm workflow show general -v',
      'osm workflow show general -t example.com          # the plan for that target',
      'osm workflow validate ./my-workflows --format github',
    ],
  },
  config: {
    title: 'Settings (osm-settings.yaml)',
    lines: [
      'osm config list',
      'osm config view server.port',
      'osm config set server.port 9000',
      'printf "server.port 9000\\nscan_tactic.default 20\\n" | osm config set',
    ],
  },
  func: {
    title: 'Utility functions',
    lines: [
      `osm func eval -e 'trim("  a  ")'`,
      `osm eval -t example.com 'file_exists("{{Output}}/probe.txt")'`,
      'osm func list -s string',
    ],
  },
  snapshot: {
    title: 'Workspace snapshots',
    lines: ['osm snapshot export example.com', 'osm snapshot import ./example.com_20260101T000000Z.zip', 'osm snapshot list'],
  },
  assets: {
    title: 'Assets and findings',
    lines: ['osm assets -w example.com --json', 'osm assets --stats', 'osm vulns --severity critical'],
  },
  schedule: {
    title: 'Schedules',
    lines: ['osm schedule list', 'osm run -f general -t example.com --as-cron "0 3 * * *"'],
  },
  install: {
    title: 'Tools and workflows',
    lines: ['osm install list', 'osm install binary -n httpx', 'osm install workflow ./workflows.zip'],
  },
  worker: {
    title: 'Distributed mode',
    lines: ['osm worker join --redis-url redis://127.0.0.1:6379', 'osm worker list --json', 'osm worker queue new -m sample-recon -T targets.txt', 'osm worker queue list', 'osm worker queue run --concurrency 4'],
  },
  org: {
    title: 'Organizations',
    lines: ['osm org create acme', 'osm org assign acme example.com', 'osm org use acme                                   # later commands default to acme', 'osm --org acme assets', 'osm --org acme run -m sample-recon -t acme.com', 'osm org delete acme --purge'],
  },
  webhook: {
    title: 'Webhook-triggered runs',
    lines: ['osm config set server.enable_trigger_via_webhook true', 'osm run -f general -t example.com --as-webhook --webhook-auth-key s3cret', 'curl -X POST "http://127.0.0.1:8002/osm/api/webhook-runs/<uuid>/trigger?key=s3cret"', 'osm webhook list'],
  },
  query: {
    title: 'Querying the database',
    lines: ['osm query runs --status failed', 'osm query runs -t example.com --json', 'osm query steps <run-uuid>', 'osm query vulns --severity critical'],
  },
  db: {
    title: 'Database maintenance',
    lines: ['osm db list', 'osm db list -t runs --limit 10', 'osm db migrate', 'osm db clean --force'],
  },
};

const ALIASES: Record<string, string> = { scan: 'run', execute: 'run', wf: 'workflow', function: 'func', eval: 'func', e: 'func', vulns: 'assets', vulnerabilities: 'assets', schedules: 'schedule' };

/** The examples text: one command's section, or all of them (`full` or no known command). */
export function usageExamples(command: string | undefined, full: boolean): string {
  const key = command ? (ALIASES[command] ?? command) : undefined;
  const keys = !full && key && USAGE_EXAMPLES[key] ? [key] : Object.keys(USAGE_EXAMPLES);
  const out: string[] = [];
  for (const k of keys) {
    const section = USAGE_EXAMPLES[k]!;
    out.push(`◆ ${section.title} (osm ${k})`);
    for (const l of section.lines) out.push(`  ${l}`);
    out.push('');
  }
  return out.join('\n');
}

/**
 * Finds `-H`, `--usage-example` or `--full-usage-example` among the options (before any `--`);
 * returns undefined when absent, else the first word that names a command.
 */
export function usageExampleRequest(args: string[], commands: Set<string>): { full: boolean; command?: string } | undefined {
  let wanted: boolean | undefined;
  let command: string | undefined;
  for (const a of args) {
    if (a === '--') break;
    if (a === '-H' || a === '--usage-example') wanted ??= false;
    else if (a === '--full-usage-example') wanted = true;
    else if (command === undefined && !a.startsWith('-') && commands.has(a)) command = a;
  }
  return wanted === undefined ? undefined : { full: wanted, command };
}
