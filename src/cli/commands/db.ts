import type { Command } from 'commander';

/** `osm db`: migrate, clean, list tables/rows, index workflows (reference workflow-engine §5.3). */
export function registerDb(program: Command): void {
  const db = program.command('db').description('database maintenance: status, migrate, copy, clean, list, index');
  db.command('migrate')
    .description('apply pending schema migrations to the configured engine (SQLite also migrates whenever it is opened)')
    .action(async (_o, command: Command) => (await import('../actions/db.js')).dbMigrate(command));
  db.command('status')
    .description('engine, location (password masked), reachability, schema version and pending migrations')
    .action(async (_o, command: Command) => (await import('../actions/db.js')).dbStatus(command));
  db.command('copy')
    .description('copy the whole base between the SQLite store and PostgreSQL (truncate-and-reload, counts and checksums verified)')
    .option('--to <postgres-url>', 'copy the SQLite base into this PostgreSQL database (migrated first)')
    .option('--from <postgres-url>', 'copy this PostgreSQL database into the SQLite base (replaces its data)')
    .action(async (_o, command: Command) => (await import('../actions/db.js')).dbCopy(command));
  db.command('clean')
    .description('delete the database and recreate it with a fresh schema (needs --force)')
    .option('--force', 'confirm: every run, asset and finding is deleted')
    .option('--clean-ws', 'also empty the workspaces folder')
    .action(async (_o, command: Command) => (await import('../actions/db.js')).dbClean(command));
  db.command('list')
    .alias('ls')
    .description('tables with their row counts, or the rows of one table (-t)')
    .option('-t, --table <name>', 'table to show')
    .option('--limit <n>', 'rows to show', '50')
    .option('--where <sql>', 'SQL condition (read-only connection)')
    .option('--columns <list>', 'comma-separated columns')
    .option('--search <text>', 'rows where any text column contains text')
    .option('--no-tui', 'plain output (the only kind; accepted for compatibility)')
    .action(async (_o, command: Command) => (await import('../actions/db.js')).dbList(command));
  db.command('index')
    .description('index the workflows folder into the database')
    .argument('[what]', 'workflow', 'workflow')
    .option('--force', 're-index every file, changed or not')
    .action(async (what: string, _o, command: Command) => (await import('../actions/db.js')).dbIndex(command, what));
}
