/**
 * `osm user …`, `osm token …`, `osm audit`: on the local base folder's database (works with the
 * daemon running or stopped; the daemon reads users and tokens per request), or through a daemon's
 * API with `--server` (same credentials, same 401/403 as any client).
 */
import type { Command } from 'commander';
import { createInterface } from 'node:readline';
import { errors } from '../../errors.js';
import { optionsOf, type GlobalOptions } from '../context.js';
import { colorEnabled, createUi, renderTable, type Ui } from '../output.js';
import { openApp } from '../app.js';
import { callApi, remoteTarget, type RemoteTarget } from '../api-client.js';
import type { AppContext } from '../../services/context.js';
import { addUser, listUsers, removeUser, setPassword, updateUser, type UserView } from '../../services/users.js';
import { createToken, listTokens, revokeToken, type TokenView } from '../../services/tokens.js';
import { auditJsonLines, listAudit, recordCli } from '../../services/audit.js';
import type { AuditRecord } from '../../store/access.js';

type TeamOptions = GlobalOptions & { server?: string; apiKey?: string; passwordStdin?: boolean; role?: string; org?: string[] | string; name?: string; expires?: string; all?: boolean; actor?: string; since?: string; result?: string; limit?: string; jsonl?: boolean };

interface Ctx {
  o: TeamOptions;
  ui: Ui;
  remote?: RemoteTarget;
}

/** Runs `local` on the base folder's database, or `remote` against `--server`. */
async function run<T>(command: Command, local: (app: AppContext, ctx: Ctx) => Promise<T> | T, remote: (r: RemoteTarget, ctx: Ctx) => Promise<T>): Promise<T> {
  const o = optionsOf<TeamOptions>(command);
  const ui = createUi({ disableColor: o.disableColor, silent: o.silent });
  const r = remoteTarget(o);
  if (r) return remote(r, { o, ui, remote: r });
  const app = await openApp(o);
  try {
    return await local(app, { o, ui });
  } finally {
    await app.close();
  }
}

const orgsOf = (o: TeamOptions): string[] | undefined => (o.org === undefined ? undefined : Array.isArray(o.org) ? o.org : [o.org]);
const orgText = (orgs: { uuid: string; name: string }[]) => (orgs.length === 0 ? '(all)' : orgs.map((x) => x.name || x.uuid).join(', '));

/** Reads one line of stdin (for --password-stdin); the trailing newline is dropped. */
async function readStdinLine(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) {
    chunks.push(c as Buffer);
    if (Buffer.concat(chunks).includes(0x0a)) break;
  }
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

/** Asks for a password on the terminal without echoing it. */
function askHidden(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    const out = rl as unknown as { _writeToOutput: (s: string) => void; output: NodeJS.WriteStream };
    let prompted = false;
    out._writeToOutput = (s: string) => {
      if (!prompted) {
        process.stderr.write(s);
        prompted = true;
      }
    };
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
  });
}

/** The new password: stdin with --password-stdin, else asked twice on the terminal. */
async function newPassword(o: TeamOptions, name: string): Promise<string> {
  if (o.passwordStdin) return readStdinLine();
  if (!process.stdin.isTTY) throw errors.validation('no terminal to ask for the password: pass it on stdin with --password-stdin');
  const first = await askHidden(`New password for ${name}: `);
  const second = await askHidden('Repeat it: ');
  if (first !== second) throw errors.validation('the passwords do not match');
  return first;
}

async function printUsers(ui: Ui, o: TeamOptions, users: UserView[]): Promise<void> {
  if (o.json) {
    ui.json({ data: users, count: users.length });
    return;
  }
  const rows = users.map((u) => [u.username, u.role, orgText(u.orgs), u.created_at]);
  ui.out(await renderTable(['User', 'Role', 'Orgs', 'Created'], rows, { color: colorEnabled(o.disableColor) }));
  ui.out(`${users.length} user(s)`);
}

/** `osm user add NAME --role R [--org O] [--password-stdin]`. */
export async function userAdd(command: Command, name: string): Promise<void> {
  await run(
    command,
    async (app, { o, ui }) => {
      const password = await newPassword(o, name);
      const u = await addUser(app, { username: name, password, role: o.role ?? '', orgs: orgsOf(o) });
      await recordCli(app, 'user add', u.username, true, `role ${u.role}`);
      if (o.json) ui.json({ message: 'User created', data: u });
      else ui.success(`Created user ${u.username} (${u.role}, orgs: ${orgText(u.orgs)})`);
    },
    async (r, { o, ui }) => {
      const password = await newPassword(o, name);
      const res = await callApi<{ message: string; data: UserView }>(r.server, '/osm/api/users', r.apiKey, { method: 'POST', body: { username: name, password, role: o.role, orgs: orgsOf(o) } });
      if (o.json) ui.json(res);
      else ui.success(`Created user ${res.data.username} (${res.data.role}, orgs: ${orgText(res.data.orgs)})`);
    },
  );
}

/** `osm user ls`. */
export async function userList(command: Command): Promise<void> {
  await run(
    command,
    async (app, { o, ui }) => printUsers(ui, o, await listUsers(app)),
    async (r, { o, ui }) => printUsers(ui, o, (await callApi<{ data: UserView[] }>(r.server, '/osm/api/users', r.apiKey)).data),
  );
}

/** `osm user passwd NAME [--password-stdin]`. */
export async function userPasswd(command: Command, name: string): Promise<void> {
  await run(
    command,
    async (app, { o, ui }) => {
      if (!(await app.repos.access.getUser(name))) throw errors.userNotFound(name);
      const u = await setPassword(app, name, await newPassword(o, name));
      await recordCli(app, 'user passwd', u.username);
      if (o.json) ui.json({ message: 'Password changed', data: u });
      else ui.success(`Changed the password of ${u.username}; its sessions have ended`);
    },
    async (r, { o, ui }) => {
      const res = await callApi<{ data: UserView }>(r.server, `/osm/api/users/${encodeURIComponent(name)}`, r.apiKey, { method: 'PUT', body: { password: await newPassword(o, name) } });
      if (o.json) ui.json({ message: 'Password changed', data: res.data });
      else ui.success(`Changed the password of ${res.data.username}; its sessions have ended`);
    },
  );
}

/** `osm user rm NAME`. */
export async function userRemove(command: Command, name: string): Promise<void> {
  await run(
    command,
    async (app, { o, ui }) => {
      const res = await removeUser(app, name);
      await recordCli(app, 'user rm', res.username);
      if (o.json) ui.json(res);
      else ui.success(`Removed user ${res.username}`);
    },
    async (r, { o, ui }) => {
      const res = await callApi<{ message: string; username: string }>(r.server, `/osm/api/users/${encodeURIComponent(name)}`, r.apiKey, { method: 'DELETE' });
      if (o.json) ui.json(res);
      else ui.success(`Removed user ${res.username}`);
    },
  );
}

/** `osm user role NAME ROLE` and `osm user orgs NAME [ORG…]`. */
export async function userUpdate(command: Command, name: string, patch: { role?: string; orgs?: string[] }): Promise<void> {
  const say = (ui: Ui, o: TeamOptions, u: UserView) => (o.json ? ui.json({ message: 'User updated', data: u }) : ui.success(`${u.username}: role ${u.role}, orgs ${orgText(u.orgs)}`));
  await run(
    command,
    async (app, { o, ui }) => {
      const u = await updateUser(app, name, patch);
      await recordCli(app, patch.role !== undefined ? 'user role' : 'user orgs', u.username, true, patch.role !== undefined ? `role ${u.role}` : `orgs ${orgText(u.orgs)}`);
      say(ui, o, u);
    },
    async (r, { o, ui }) => say(ui, o, (await callApi<{ data: UserView }>(r.server, `/osm/api/users/${encodeURIComponent(name)}`, r.apiKey, { method: 'PUT', body: patch })).data),
  );
}

async function printTokens(ui: Ui, o: TeamOptions, tokens: TokenView[]): Promise<void> {
  if (o.json) {
    ui.json({ data: tokens, count: tokens.length });
    return;
  }
  const rows = tokens.map((t) => [t.id, t.name, t.role, orgText(t.orgs), `${t.prefix}…`, t.status, t.expires_at ?? 'never', t.last_used_at ?? '-']);
  ui.out(await renderTable(['ID', 'Name', 'Role', 'Orgs', 'Token', 'Status', 'Expires', 'Last used'], rows, { color: colorEnabled(o.disableColor) }));
  ui.out(`${tokens.length} token(s)`);
}

function showCreated(ui: Ui, o: TeamOptions, t: TokenView & { token: string }): void {
  if (o.json) {
    ui.json({ message: 'Token created; store it now, it is not shown again', data: t, token: t.token });
    return;
  }
  ui.success(`Created token ${t.name} (id ${t.id}, ${t.role}, orgs: ${orgText(t.orgs)}, expires: ${t.expires_at ?? 'never'})`);
  ui.out(t.token);
  ui.out('Store it now: it is not shown again. Use it as `x-osm-api-key: <token>` or `Authorization: Bearer <token>`.');
}

/** `osm token create --name N --role R [--org O] [--expires 30d]`. */
export async function tokenCreate(command: Command): Promise<void> {
  await run(
    command,
    async (app, { o, ui }) => {
      const t = await createToken(app, { name: o.name ?? '', role: o.role ?? '', orgs: orgsOf(o), expires: o.expires, createdBy: 'cli' });
      await recordCli(app, 'token create', t.name, true, `role ${t.role}`);
      showCreated(ui, o, t);
    },
    async (r, { o, ui }) => {
      const res = await callApi<{ data: TokenView & { token: string } }>(r.server, '/osm/api/tokens', r.apiKey, { method: 'POST', body: { name: o.name, role: o.role, orgs: orgsOf(o), expires: o.expires } });
      showCreated(ui, o, res.data);
    },
  );
}

/** `osm token ls [--all]`. */
export async function tokenList(command: Command): Promise<void> {
  await run(
    command,
    async (app, { o, ui }) => printTokens(ui, o, await listTokens(app, { all: o.all })),
    async (r, { o, ui }) => printTokens(ui, o, (await callApi<{ data: TokenView[] }>(r.server, `/osm/api/tokens${o.all ? '?all=true' : ''}`, r.apiKey)).data),
  );
}

/** `osm token revoke ID|NAME`. */
export async function tokenRevoke(command: Command, ref: string): Promise<void> {
  const say = (ui: Ui, o: TeamOptions, res: { message: string; id: number; name: string }) => (o.json ? ui.json(res) : ui.success(`${res.message}: ${res.name} (id ${res.id})`));
  await run(
    command,
    async (app, { o, ui }) => {
      const res = await revokeToken(app, ref);
      await recordCli(app, 'token revoke', res.name);
      say(ui, o, res);
    },
    async (r, { o, ui }) => say(ui, o, await callApi(r.server, `/osm/api/tokens/${encodeURIComponent(ref)}`, r.apiKey, { method: 'DELETE' })),
  );
}

/** `osm audit [--actor A] [--since T] [--result R] [--limit N] [--json|--jsonl]`. */
export async function auditList(command: Command): Promise<void> {
  const filterOf = (o: TeamOptions) => ({ actor: o.actor, since: o.since, result: o.result });
  const limitOf = (o: TeamOptions) => {
    const n = Number(o.limit ?? 50);
    if (!Number.isInteger(n) || n < 1 || n > 10_000) throw errors.validation(`--limit must be 1-10000, got ${JSON.stringify(o.limit)}`);
    return n;
  };
  const print = async (ui: Ui, o: TeamOptions, rows: AuditRecord[], total: number) => {
    if (o.json) {
      ui.json({ data: rows, pagination: { total, offset: 0, limit: limitOf(o) } });
      return;
    }
    const table = rows.map((a) => [a.created_at, a.actor, a.role || '-', `${a.method} ${a.route}`, a.object, `${a.status} ${a.result}`, a.client_ip]);
    ui.out(await renderTable(['Time', 'Actor', 'Role', 'Request', 'Object', 'Status', 'Client'], table, { color: colorEnabled(o.disableColor) }));
    ui.out(`${rows.length} of ${total} entr${total === 1 ? 'y' : 'ies'}`);
  };
  await run(
    command,
    async (app, { o, ui }) => {
      if (o.jsonl) {
        for await (const line of auditJsonLines(app, filterOf(o))) process.stdout.write(line);
        return;
      }
      const r = await listAudit(app, filterOf(o), { offset: 0, limit: limitOf(o) });
      await print(ui, o, r.data, r.total);
    },
    async (r, { o, ui }) => {
      const q = new URLSearchParams(Object.entries(filterOf(o)).filter(([, v]) => v !== undefined) as [string, string][]);
      if (o.jsonl) {
        q.set('format', 'jsonl');
        process.stdout.write(await callApi<string>(r.server, `/osm/api/audit?${q}`, r.apiKey, { raw: true }));
        return;
      }
      q.set('limit', String(limitOf(o)));
      const res = await callApi<{ data: AuditRecord[]; pagination: { total: number } }>(r.server, `/osm/api/audit?${q}`, r.apiKey);
      await print(ui, o, res.data, res.pagination.total);
    },
  );
}
