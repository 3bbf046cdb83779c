/**
 * A PostgreSQL server of the test's own: `initdb` in a temporary folder, `pg_ctl` start/stop/
 * restart on a free loopback port, removed at the end. Fault tests stop and restart it; the
 * machine's shared server is never touched. As root the tools run as the `postgres` user (initdb
 * refuses root). Absent binaries: the caller skips (or fails under CI=true).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The folder of initdb/pg_ctl (Debian: /usr/lib/postgresql/<version>/bin), or undefined. */
export function pgBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  for (const v of readdirSync(root).sort((a, b) => Number(b) - Number(a))) {
    const bin = join(root, v, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

/**
 * A free loopback port below the kernel's ephemeral range (32768–60999 on Linux): the cluster is
 * stopped and started again on it, and a port from that range could be handed, while the server
 * is down, to another test's `listen(0)` or outgoing connection.
 */
async function freePort(): Promise<number> {
  const tryPort = (port: number) =>
    new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await tryPort(port)) return port;
  }
  throw new Error('no free loopback port in 20000-31999 for a PostgreSQL cluster');
}

export interface PgCluster {
  url: string;
  port: number;
  start(): void;
  /**
   * Fast shutdown (default): sessions are told "terminating connection due to administrator
   * command" and their statements rolled back. Immediate: every server process quits at once,
   * as in a crash (the next start replays the WAL).
   */
  stop(mode?: 'fast' | 'immediate'): void;
  remove(): void;
}

/** Creates and starts a cluster. */
export async function startPgCluster(): Promise<PgCluster> {
  const bin = pgBinDir();
  if (!bin) throw new Error('initdb/pg_ctl not found under /usr/lib/postgresql');
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'osm-pgc-'));
  const data = join(dir, 'data');
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const as = (file: string, args: string[]) =>
    root ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, file), ...args], { stdio: 'pipe', cwd: '/' }) : execFileSync(join(bin, file), args, { stdio: 'pipe' });
  as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const cluster: PgCluster = {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: () => void as('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']),
    stop: (mode = 'fast') => void as('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']),
    remove: () => {
      try {
        cluster.stop();
      } catch {
        // not running
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  cluster.start();
  return cluster;
}
