/**
 * The spawner process: a deliberately tiny Node program (node:child_process and node:fs only)
 * that forks step commands on behalf of the engine. fork() cost grows with the parent's memory
 * (measured: ~4 ms per spawn at 50 MB RSS, ~30 ms at 250 MB), so the engine — and above all the
 * daemon, whose heap grows with its work — never forks itself: it sends requests here over IPC.
 *
 * Protocol (JSON over the IPC channel):
 *   → { t: 'spawn', id, argv, env, cwd? }
 *   ← { t: 'pid', id, pid }            right after the fork (pid 0 and an error when it failed)
 *   ← { t: 'out', id, s, d }           output as it arrives: s 1 = stdout, 2 = stderr; d = the bytes
 *                                      as a latin1 string (one char per byte: exact, JSON-safe)
 *   ← { t: 'exit', id, code, signal }  after every 'out' of the request
 * The engine writes the step log files and keeps the in-memory copy (engine/live/run-output.ts),
 * so that one writer orders every line of a step and every reader sees it as it is written.
 * Kills are sent by the engine directly to the process group (same user), not through here.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * The child's whole program, as one self-contained function: the parent runs it with
 * `node -e "(<source>)()"`, so it works the same from `dist/` and from the TypeScript sources
 * under test. It must not reference anything outside its own body.
 */
export function spawnerMain(local?: (msg: unknown) => void, load?: NodeJS.Require): ((msg: unknown) => void) | undefined {
  // `node -e` provides CommonJS `require`; in-process (ESM) use passes one in.
  const req_ = load ?? require;
  const { spawn } = req_('node:child_process') as typeof import('node:child_process');
  const { existsSync } = req_('node:fs') as typeof import('node:fs');

  interface SpawnRequest {
    t: 'spawn';
    id: number;
    argv: string[];
    env: Record<string, string>;
    /** A cached base environment (defined once with envDef, evicted by envDrop). */
    envId?: number;
    envDef?: Record<string, string>;
    envDrop?: number[];
    cwd?: string;
  }

  /**
   * Output bytes sent to the engine and not yet handed to the channel. Past HIGH_WATER every
   * child's pipes are paused (the tools block on write, as with a slow terminal) until the
   * backlog drains below LOW_WATER: the engine is never flooded and this process stays small.
   */
  const HIGH_WATER = 8 * 1024 * 1024;
  const LOW_WATER = 1024 * 1024;
  let backlog = 0;
  const paused = new Set<import('node:stream').Readable>();
  const sendOut = (msg: { t: 'out'; id: number; s: 1 | 2; d: string }, from: import('node:stream').Readable) => {
    if (local) return local(msg);
    backlog += msg.d.length;
    process.send?.(msg, undefined, undefined, () => {
      backlog -= msg.d.length;
      if (backlog <= LOW_WATER && paused.size) {
        for (const r of paused) r.resume();
        paused.clear();
      }
    });
    if (backlog > HIGH_WATER) {
      from.pause();
      paused.add(from);
    }
  };
  const send = local ?? ((msg: unknown) => process.send?.(msg));
  const envs = new Map<number, Record<string, string>>();
  /** Process groups started here and still running. */
  const live = new Set<number>();

  const run = (req: SpawnRequest) => {
    for (const id of req.envDrop ?? []) envs.delete(id);
    if (req.envId !== undefined && req.envDef) envs.set(req.envId, req.envDef);
    const base = req.envId !== undefined ? envs.get(req.envId) : undefined;
    const env = base ? { ...base, ...req.env } : req.env;
    const [file, ...args] = req.argv;
    let child: import('node:child_process').ChildProcess;
    try {
      child = spawn(file!, args, {
        cwd: req.cwd && existsSync(req.cwd) ? req.cwd : undefined,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      send({ t: 'pid', id: req.id, pid: 0 });
      send({ t: 'out', id: req.id, s: 2, d: Buffer.from(`${(e as Error).message}\n`).toString('latin1') });
      send({ t: 'exit', id: req.id, code: 127, signal: null });
      return;
    }
    const pid = child.pid ?? 0;
    if (pid) live.add(pid);
    send({ t: 'pid', id: req.id, pid });
    const forward = (s: 1 | 2, from: import('node:stream').Readable) => (chunk: Buffer) => {
      if (chunk.length) sendOut({ t: 'out', id: req.id, s, d: chunk.toString('latin1') }, from);
    };
    child.stdout!.on('data', forward(1, child.stdout!));
    child.stderr!.on('data', forward(2, child.stderr!));
    let spawnError = '';
    child.on('error', (e) => {
      spawnError = `${e.message}\n`;
    });
    child.on('close', (code, signal) => {
      live.delete(pid);
      paused.delete(child.stdout!);
      paused.delete(child.stderr!);
      if (spawnError) send({ t: 'out', id: req.id, s: 2, d: Buffer.from(spawnError).toString('latin1') });
      send({ t: 'exit', id: req.id, code: spawnError && code === null ? 127 : code, signal });
    });
  };

  const onMessage = (msg: unknown) => {
    const m = msg as SpawnRequest;
    if (m && m.t === 'spawn') run(m);
  };
  // In-process use (see pool.ts LocalSpawner): the caller delivers requests itself.
  if (local) return onMessage;
  process.on('message', onMessage);
  // The engine went away (it exited, or was killed): its runs cannot record anything any more,
  // so their process groups must not outlive it. SIGTERM now, SIGKILL after a grace period.
  const killAll = (signal: NodeJS.Signals) => {
    for (const pid of live) {
      try {
        process.kill(-pid, signal);
      } catch {
        /* already gone */
      }
    }
  };
  process.on('disconnect', () => {
    if (live.size === 0) process.exit(0);
    killAll('SIGTERM');
    setTimeout(() => {
      killAll('SIGKILL');
      process.exit(0);
    }, 2000);
  });
  return undefined;
}
