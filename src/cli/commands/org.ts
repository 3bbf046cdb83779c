import type { Command } from 'commander';

/** `osm org`: list, create, show, rename, assign workspaces to and delete organizations. */
export function registerOrg(program: Command): void {
  const org = program.command('org').alias('orgs').description('organizations: group workspaces (and their assets, findings and runs)');

  org
    .command('list')
    .alias('ls')
    .description('list orgs with their workspace, asset, vulnerability and run counts')
    .action(async (_opts, command: Command) => {
      const { orgList } = await import('../actions/org.js');
      await orgList(command);
    });

  org
    .command('create')
    .description('create an org (names are unique, case-insensitively)')
    .argument('<name>', 'org name')
    .option('-d, --description <text>', 'description')
    .option('--tags <list>', 'comma-separated tags, e.g. client,prod')
    .option('--uuid <uuid>', 'use this uuid instead of a random one')
    .action(async (name: string, _opts, command: Command) => {
      const { orgCreate } = await import('../actions/org.js');
      await orgCreate(command, name);
    });

  org
    .command('show')
    .description('one org (name or uuid) with its stats and workspaces')
    .argument('<org>', 'org name (case-insensitive) or uuid')
    .action(async (ref: string, _opts, command: Command) => {
      const { orgShow } = await import('../actions/org.js');
      await orgShow(command, ref);
    });

  org
    .command('rename')
    .description('rename an org (not the default org)')
    .argument('<org>', 'org name or uuid')
    .argument('<new-name>', 'new name')
    .action(async (ref: string, newName: string, _opts, command: Command) => {
      const { orgRename } = await import('../actions/org.js');
      await orgRename(command, ref, newName);
    });

  org
    .command('assign')
    .description('move workspaces, with their assets, vulnerabilities and runs, into an org')
    .argument('<org>', 'org name or uuid')
    .argument('<workspace...>', 'workspace names')
    .action(async (ref: string, workspaces: string[], _opts, command: Command) => {
      const { orgAssign } = await import('../actions/org.js');
      await orgAssign(command, ref, workspaces);
    });

  org
    .command('use')
    .description('make an org the default of this base folder for assets, vulns, query and run (--org still wins); no argument shows it')
    .argument('[org]', 'org name or uuid')
    .option('--clear', 'forget the active org (commands see every org again)')
    .action(async (ref: string | undefined, _opts, command: Command) => {
      const { orgUse } = await import('../actions/org.js');
      await orgUse(command, ref);
    });

  org
    .command('delete')
    .alias('rm')
    .description("delete an org: its workspaces move to the default org, or with --purge are deleted with all their data")
    .argument('<org>', 'org name or uuid')
    .option('--purge', 'delete the org\'s workspaces, assets, vulnerabilities and runs instead of moving them')
    .action(async (ref: string, _opts, command: Command) => {
      const { orgDelete } = await import('../actions/org.js');
      await orgDelete(command, ref);
    });
}
