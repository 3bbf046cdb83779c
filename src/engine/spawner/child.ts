/**
 * The spawner process: a deliberately tiny Node program (node:child_process and node:fs only)
 * that forks step commands on behalf of the engine. fork() cost grows with the parent's memory
 * (measured: ~4 ms per spawn at 50 MB RSS, ~30 ms at 250 MB), so the engine — and above all the
 * daemon, whose heap grows with its work — never forks itself: it sends requests here over IPC.
 *
 * Protocol (JSON over the IPC channel):
 *   → { t: 'spawn', id, argv, env, cwd?, logFile?, stdoutCap, stderrCap }
 *   ← { t: 'pid', id, pid }            right after the fork (pid 0 and an error when it failed)
 *   ← { t: 'exit', id, code, signal, stdout, stderr, truncated, lines }
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
  const { createWriteStream, existsSync } = req_('node:fs') as typeof import('node:fs');

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
    logFile?: string;
    stdoutCap: number;
    stderrCap: number;
  }

  const capture = (cap: number) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const c = {
      truncated: false,
      push(chunk: Buffer) {
        if (size >= cap) {
          c.truncated = true;
          return;
        }
        const part = chunk.length > cap - size ? chunk.subarray(0, cap - size) : chunk;
        if (part.length < chunk.length) c.truncated = true;
        chunks.push(part);
        size += part.length;
      },
      text: () => Buffer.concat(chunks).toString('utf8'),
    };
    return c;
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
    const out = capture(req.stdoutCap);
    const err = capture(req.stderrCap);
    let log: import('node:fs').WriteStream | undefined;
    let lines = 0;
    let lastNewline = true;
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
      send({ t: 'exit', id: req.id, code: 127, signal: null, stdout: '', stderr: `${(e as Error).message}\n`, truncated: false, lines: 1 });
      return;
    }
    const pid = child.pid ?? 0;
    if (pid) live.add(pid);
    send({ t: 'pid', id: req.id, pid });
    const onData = (cap: ReturnType<typeof capture>) => (chunk: Buffer) => {
      cap.push(chunk);
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      if (chunk.length) lastNewline = chunk[chunk.length - 1] === 10;
      if (req.logFile) {
        log ??= createWriteStream(req.logFile, { flags: 'a' });
        log.write(chunk);
      }
    };
    child.stdout!.on('data', onData(out));
    child.stderr!.on('data', onData(err));
    let spawnError = '';
    child.on('error', (e) => {
      spawnError = `${e.message}\n`;
    });
    child.on('close', (code, signal) => {
      live.delete(pid);
      const finish = () =>
        send({
          t: 'exit',
          id: req.id,
          code: spawnError && code === null ? 127 : code,
          signal,
          stdout: out.text(),
          stderr: err.text() + spawnError,
          truncated: out.truncated || err.truncated,
          lines: lines + (lastNewline ? 0 : 1),
        });
      if (log) log.end(finish);
      else finish();
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
