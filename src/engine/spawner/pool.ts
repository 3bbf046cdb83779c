import { spawn, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { spawnerMain } from './child.js';

export interface SpawnRequest {
  argv: string[];
  env: Record<string, string>;
  cwd?: string;
  logFile?: string;
  stdoutCap: number;
  stderrCap: number;
}

export interface SpawnExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  lines: number;
}

interface Pending {
  onPid: (pid: number) => void;
  resolve: (exit: SpawnExit) => void;
  reject: (err: Error) => void;
}

const SOURCE = `(${spawnerMain.toString()})()`;

/** One spawner child process and its in-flight requests. */
class Spawner {
  private child?: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  get load(): number {
    return this.pending.size;
  }

  private start(): ChildProcess {
    const child = spawn(process.execPath, ['-e', SOURCE], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'json' });
    child.on('message', (msg: { t: string; id: number; pid?: number } & SpawnExit) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      if (msg.t === 'pid') p.onPid(msg.pid ?? 0);
      else if (msg.t === 'exit') {
        this.pending.delete(msg.id);
        this.idle();
        p.resolve(msg);
      }
    });
    child.on('exit', () => {
      if (this.child === child) this.child = undefined;
      // In-flight requests cannot be answered any more: their processes keep running in their
      // own groups; the step fails and the run's cancel/cleanup kills them by PID.
      const err = new Error('the spawner process exited unexpectedly');
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        p.reject(err);
      }
    });
    child.on('error', () => undefined);
    return child;
  }

  /** Lets the engine's process exit while nothing is in flight. */
  private idle(): void {
    if (this.pending.size === 0 && this.child) {
      this.child.unref();
      (this.child as unknown as { channel?: { unref(): void } }).channel?.unref();
    }
  }

  run(req: SpawnRequest, onPid: (pid: number) => void): Promise<SpawnExit> {
    this.child ??= this.start();
    const child = this.child;
    child.ref();
    (child as unknown as { channel?: { ref(): void } }).channel?.ref();
    const id = this.nextId++;
    return new Promise<SpawnExit>((resolve, reject) => {
      this.pending.set(id, { onPid, resolve, reject });
      child.send({ t: 'spawn', id, ...req }, (err) => {
        if (err) {
          this.pending.delete(id);
          reject(err);
        }
      });
    });
  }

  stop(): void {
    this.child?.disconnect();
    this.child = undefined;
  }
}

/**
 * A small pool of spawner processes (one per CPU core, at most 4): the engine's fork() requests
 * are spread over them, so spawning never blocks the engine's event loop and its cost does not
 * grow with the engine's heap.
 */
export class SpawnerPool {
  private readonly spawners: Spawner[];

  constructor(size = Math.min(4, Math.max(1, cpus().length))) {
    this.spawners = Array.from({ length: size }, () => new Spawner());
  }

  /** Runs a request on the least loaded spawner. */
  run(req: SpawnRequest, onPid: (pid: number) => void): Promise<SpawnExit> {
    let best = this.spawners[0]!;
    for (const s of this.spawners) if (s.load < best.load) best = s;
    return best.run(req, onPid);
  }

  stop(): void {
    for (const s of this.spawners) s.stop();
  }
}

let shared: SpawnerPool | undefined;

/** The process-wide pool (created on first use). */
export function spawnerPool(): SpawnerPool {
  shared ??= new SpawnerPool();
  return shared;
}
