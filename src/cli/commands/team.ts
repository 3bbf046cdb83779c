import { Argument, Option, type Command } from 'commander';

const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((v) => v.trim()).filter(Boolean)];
const ROLE_HELP = 'viewer (read), operator (run and schedule), admin (everything)';

/** `--server/--api-key`: manage a running daemon through its API instead of the local base folder. */
function remoteOptions(cmd: Command): Command {
  return cmd
    .option('--server <url>', "manage this daemon through its API (env OSM_SERVER) instead of the local base folder's database")
    .option('--api-key <key>', 'API key or personal API token for --server (env OSM_API_KEY)');
}

/** `osm user add|ls|passwd|rm|role|orgs`, `osm token create|ls|revoke` and `osm audit`. */
export function registerTeam(program: Command): void {
  const user = program.command('user').alias('users').description('users of a shared daemon: roles (viewer, operator, admin) and org bindings');

  remoteOptions(
    user
      .command('add')
      .description('add a user; the password is asked on the terminal, or read from stdin with --password-stdin')
      .argument('<name>', 'user name (letters, digits, . _ @ -)')
      .addOption(new Option('--role <role>', ROLE_HELP).choices(['viewer', 'operator', 'admin']).makeOptionMandatory())
      .option('--org <org>', 'bind to an org (name or uuid; repeat or comma-separate); none = every org', collect)
      .option('--password-stdin', 'read the password from the first line of stdin (for scripts)'),
  ).action(async (name: string, _o, command: Command) => {
    const { userAdd } = await import('../actions/team.js');
    await userAdd(command, name);
  });

  remoteOptions(user.command('ls').alias('list').description('list users with their role and orgs')).action(async (_o, command: Command) => {
    const { userList } = await import('../actions/team.js');
    await userList(command);
  });

  remoteOptions(
    user
      .command('passwd')
      .description("change a user's password (ends every session of that user)")
      .argument('<name>', 'user name')
      .option('--password-stdin', 'read the password from the first line of stdin'),
  ).action(async (name: string, _o, command: Command) => {
    const { userPasswd } = await import('../actions/team.js');
    await userPasswd(command, name);
  });

  remoteOptions(user.command('rm').alias('remove').description('remove a user (its sessions end at once)').argument('<name>', 'user name')).action(async (name: string, _o, command: Command) => {
    const { userRemove } = await import('../actions/team.js');
    await userRemove(command, name);
  });

  remoteOptions(
    user
      .command('role')
      .description("change a user's role (applies to the next request)")
      .argument('<name>', 'user name')
      .addArgument(new Argument('<role>', ROLE_HELP).choices(['viewer', 'operator', 'admin'])),
  ).action(async (name: string, role: string, _o, command: Command) => {
    const { userUpdate } = await import('../actions/team.js');
    await userUpdate(command, name, { role });
  });

  remoteOptions(
    user
      .command('orgs')
      .description("set the orgs a user is bound to (no org = every org)")
      .argument('<name>', 'user name')
      .argument('[org...]', 'org names or uuids'),
  ).action(async (name: string, orgs: string[], _o, command: Command) => {
    const { userUpdate } = await import('../actions/team.js');
    await userUpdate(command, name, { orgs });
  });

  const token = program.command('token').alias('tokens').description('personal API tokens: a role, optional orgs and expiry; usable as x-osm-api-key or Bearer');

  remoteOptions(
    token
      .command('create')
      .description('create a token; its secret is printed once (in --json as "token")')
      .requiredOption('--name <name>', 'token name (unique among live tokens)')
      .addOption(new Option('--role <role>', ROLE_HELP).choices(['viewer', 'operator', 'admin']).makeOptionMandatory())
      .option('--org <org>', 'bind to an org (repeat or comma-separate); none = every org', collect)
      .option('--expires <duration>', 'lifetime: 30d, 12h, 45m, 3600s (default: never)'),
  ).action(async (_o, command: Command) => {
    const { tokenCreate } = await import('../actions/team.js');
    await tokenCreate(command);
  });

  remoteOptions(token.command('ls').alias('list').description('list tokens (never their secrets)').option('--all', 'include revoked tokens')).action(async (_o, command: Command) => {
    const { tokenList } = await import('../actions/team.js');
    await tokenList(command);
  });

  remoteOptions(token.command('revoke').description('revoke a token by id or name (it stops working at the next request)').argument('<token>', 'token id or name')).action(
    async (ref: string, _o, command: Command) => {
      const { tokenRevoke } = await import('../actions/team.js');
      await tokenRevoke(command, ref);
    },
  );

  remoteOptions(
    program
      .command('audit')
      .description('the audit log: every state-changing API request and user/token change, newest first')
      .option('--actor <name>', 'only this user, token or login name')
      .option('--since <time>', 'only entries at or after this ISO time')
      .addOption(new Option('--result <result>', 'only this result').choices(['ok', 'denied', 'error']))
      .option('--limit <n>', 'entries to show', '50')
      .option('--jsonl', 'export every matching entry as JSON lines, oldest first'),
  ).action(async (_o, command: Command) => {
    const { auditList } = await import('../actions/team.js');
    await auditList(command);
  });
}
