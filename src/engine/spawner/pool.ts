import { spawn, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { createRequire } from 'node:module';
import { spawnerMain } from './child.js';

export interface SpawnRequest {
  argv: string[];
  /** Per-request variables, merged over `baseEnv`. */
  env: Record<string, string>;
  /**
   * A large environment shared by many requests (a run's base environment). It is sent to a
   * spawner once and referenced by id afterwards: re-sending ~100 variables per step cost ~0.5 ms.
   */
  baseEnv?: Record<string, string>;
  cwd?: string;
}

export interface SpawnExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Receives a request's output as it arrives (stream 1 = stdout, 2 = stderr). */
export type OutputHandler = (stream: 1 | 2, chunk: Buffer) => void;

/** What a request hears back besides its exit. */
export interface SpawnCallbacks {
  onPid: (pid: number) => void;
  onOutput?: OutputHandler;
}

interface Pending extends SpawnCallbacks {
  resolve: (exit: SpawnExit) => void;
  reject: (err: Error) => void;
}

interface ChildMessage {
  t: 'pid' | 'out' | 'exit';
  id: number;
  pid?: number;
  s?: 1 | 2;
  d?: string;
  code?: number | null;
  signal?: NodeJS.Signals | null;
}

/** Delivers one message of a spawner to its request; true when the request is finished. */
function deliver(p: Pending, msg: ChildMessage): boolean {
  if (msg.t === 'pid') p.onPid(msg.pid ?? 0);
  else if (msg.t === 'out') {
    if (p.onOutput && msg.d) p.onOutput(msg.s === 2 ? 2 : 1, Buffer.from(msg.d, 'latin1'));
  } else if (msg.t === 'exit') {
    p.resolve({ code: msg.code ?? null, signal: msg.signal ?? null });
    return true;
  }
  return false;
}

const SOURCE = `(${spawnerMain.toString()})()`;

/** Base environments each spawner keeps (LRU, mirrored exactly by the child). */
const ENV_CACHE = 16;
const envIds = new WeakMap<object, number>();
let nextEnvId = 1;

/** One spawner child process and its in-flight requests. */
class Spawner {
  private child?: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Base env ids the child holds, least recently used first (the child applies the same LRU). */
  private cachedEnvs: number[] = [];

  get load(): number {
    return this.pending.size;
  }

  private start(): ChildProcess {
    const child = spawn(process.execPath, ['-e', SOURCE], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'json' });
    child.on('message', (msg: ChildMessage) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      if (msg.t === 'exit') {
        this.pending.delete(msg.id);
        this.idle();
      }
      deliver(p, msg);
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

  /** The env fields of a request: `envId` (+ the definition the first time, + evictions). */
  private envFields(base: Record<string, string> | undefined): Record<string, unknown> {
    if (!base) return {};
    let id = envIds.get(base);
    if (id === undefined) {
      id = nextEnvId++;
      envIds.set(base, id);
    }
    const at = this.cachedEnvs.indexOf(id);
    if (at !== -1) {
      this.cachedEnvs.splice(at, 1);
      this.cachedEnvs.push(id);
      return { envId: id };
    }
    this.cachedEnvs.push(id);
    const drop = this.cachedEnvs.length > ENV_CACHE ? this.cachedEnvs.splice(0, this.cachedEnvs.length - ENV_CACHE) : [];
    return { envId: id, envDef: base, ...(drop.length ? { envDrop: drop } : {}) };
  }

  /** Starts the child now (idle, not holding the process open) so the first step does not wait for it. */
  warm(): void {
    if (this.child) return;
    this.cachedEnvs = [];
    this.child = this.start();
    this.idle();
  }

  run(req: SpawnRequest, cb: SpawnCallbacks): Promise<SpawnExit> {
    if (!this.child) this.cachedEnvs = [];
    this.child ??= this.start();
    const child = this.child;
    child.ref();
    (child as unknown as { channel?: { ref(): void } }).channel?.ref();
    const id = this.nextId++;
    return new Promise<SpawnExit>((resolve, reject) => {
      this.pending.set(id, { ...cb, resolve, reject });
      const { baseEnv, ...rest } = req;
      child.send({ t: 'spawn', id, ...rest, ...this.envFields(baseEnv) }, (err) => {
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
 * Spawns in this process (same protocol, no IPC). Cheaper per step while this process is small
 * (the CLI), but fork() cost grows with this process's memory — the daemon uses spawner processes.
 */
class LocalSpawner {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private readonly handle = spawnerMain((msg) => {
    const m = msg as ChildMessage;
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.t === 'exit') this.pending.delete(m.id);
    deliver(p, m);
  }, createRequire(import.meta.url))!;

  get load(): number {
    return this.pending.size;
  }

  warm(): void {}

  run(req: SpawnRequest, cb: SpawnCallbacks): Promise<SpawnExit> {
    const id = this.nextId++;
    const { baseEnv, env, ...rest } = req;
    return new Promise<SpawnExit>((resolve, reject) => {
      this.pending.set(id, { ...cb, resolve, reject });
      this.handle({ t: 'spawn', id, ...rest, env: baseEnv ? { ...baseEnv, ...env } : env });
    });
  }

  stop(): void {}
}

/**
 * A small pool of spawner processes (one per CPU core, at most 4): the engine's fork() requests
 * are spread over them, so spawning never blocks the engine's event loop and its cost does not
 * grow with the engine's heap.
 */
export class SpawnerPool {
  private readonly spawners: (Spawner | LocalSpawner)[];

  constructor(size = Math.min(4, Math.max(1, cpus().length)), mode: 'process' | 'local' = 'process') {
    this.spawners = mode === 'local' ? [new LocalSpawner()] : Array.from({ length: size }, () => new Spawner());
  }

  /** Runs a request on the least loaded spawner. */
  run(req: SpawnRequest, cb: SpawnCallbacks): Promise<SpawnExit> {
    let best = this.spawners[0]!;
    for (const s of this.spawners) if (s.load < best.load) best = s;
    return best.run(req, cb);
  }

  /**
   * Starts every spawner process ahead of use (the daemon, at start): a spawner takes ~100 ms to
   * boot, which the first steps of the first runs would otherwise wait for (measured: the first
   * wave of 20 runs took 250–400 ms longer than later ones).
   */
  warm(): void {
    for (const s of this.spawners) s.warm();
  }

  stop(): void {
    for (const s of this.spawners) s.stop();
  }
}

let shared: SpawnerPool | undefined;

/** The process-wide pool (created on first use). */
export function spawnerPool(): SpawnerPool {
  shared ??= new SpawnerPool(undefined, process.env.OSM_SPAWNER === 'local' ? 'local' : 'process');
  return shared;
}
