/**
 * What `osm run` reads before anything runs: its flags, the targets (-t, -T, stdin, reshaped,
 * chunked), numeric flags and a module given on stdin or by URL.
 */
import { existsSync, fstatSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errors } from '../../errors.js';
import { normaliseTargets } from '../../services/runs.js';

export interface RunFlags {
  distributedRun?: boolean;
  redisUrl?: string;
  chunkThreads?: string;
  flow?: string;
  module?: string[];
  target?: string[];
  targetFile?: string;
  params?: string[];
  paramsFile?: string;
  concurrency: string;
  tactic: string;
  threadsHold?: string;
  exclude?: string[];
  fuzzyExclude?: string[];
  space?: string;
  workspace?: string;
  workspacesFolder?: string;
  heuristicsCheck: 'none' | 'basic' | 'advanced';
  dryRun?: boolean;
  timeout?: string;
  /** `--scope-file`: the run's target scope (docs/scope.md). */
  scopeFile?: string;
  skipValidation?: boolean;
  emptyTarget?: boolean;
  disableWorkflowState?: boolean;
  server?: string;
  apiKey?: string;
  runPriority: 'low' | 'normal' | 'high' | 'critical';
  resume?: string;
  repeat?: boolean;
  repeatWaitTime: string;
  chunkSize?: string;
  chunkCount?: string;
  chunkPart?: string;
  convertToFile?: boolean;
  convertFileToLine?: boolean;
  progressBar?: boolean;
  sudoAware?: boolean;
  stdModule?: boolean;
  moduleUrl?: string;
  queue?: boolean;
  serverUrl?: string;
  disableLogging?: boolean;
  ciOutputFormat?: boolean;
  queueRun?: boolean;
  asCron?: string;
  asWebhook?: boolean;
  webhookAuthKey?: string;
}

/** Reads targets piped on stdin (only when stdin is a pipe or a file, never a terminal). */
export function stdinTargets(): string[] {
  try {
    const st = fstatSync(0);
    if (!st.isFIFO() && !st.isFile() && !st.isSocket()) return [];
    return readFileSync(0, 'utf8').split(/\r?\n/);
  } catch {
    return [];
  }
}

export function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw errors.validation(`${flag} must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

/** --convert-file-to-line / --convert-to-file (reference §3.1 step 3). */
export function reshapeTargets(targets: string[], o: RunFlags): string[] {
  let out = targets;
  if (o.convertFileToLine) {
    out = normaliseTargets(out.flatMap((t) => (existsSync(t) && statSync(t).isFile() ? readFileSync(t, 'utf8').split(/\r?\n/) : [t])));
  }
  if (o.convertToFile && out.length > 0) {
    const dir = mkdtempSync(join(tmpdir(), 'osm-targets-'));
    const file = join(dir, 'targets.txt');
    writeFileSync(file, `${out.join('\n')}\n`);
    out = [file];
  }
  return out;
}

/** --chunk-size / --chunk-count / --chunk-part (reference §3.1 step 4); 'printed' when only the chunk list was asked for. */
export function chunkTargets(targets: string[], o: RunFlags): string[] | 'printed' {
  if (o.chunkSize === undefined && o.chunkCount === undefined) {
    if (o.chunkPart !== undefined) throw errors.validation('--chunk-part needs --chunk-size or --chunk-count');
    return targets;
  }
  const total = targets.length;
  const count = positiveInt(o.chunkCount, '--chunk-count');
  const size = count !== undefined ? Math.max(1, Math.ceil(total / count)) : positiveInt(o.chunkSize, '--chunk-size')!;
  const chunks = Math.max(1, Math.ceil(total / size));
  if (o.chunkPart === undefined) {
    const lines = [`Chunk Info: ${total} total targets, ${chunks} chunks of size ${size}`];
    for (let i = 0; i < chunks; i++) lines.push(`  chunk ${i}: indices ${i * size}-${Math.min(total, (i + 1) * size) - 1}`);
    process.stdout.write(`${lines.join('\n')}\n`);
    return 'printed';
  }
  const part = Number(o.chunkPart);
  if (!Number.isInteger(part) || part < 0) throw errors.validation(`--chunk-part must be a non-negative integer, got ${JSON.stringify(o.chunkPart)}`);
  if (part >= chunks) throw errors.validation(`chunk-part ${part} exceeds total chunks ${chunks} (0-indexed)`);
  const slice = targets.slice(part * size, (part + 1) * size);
  process.stdout.write(`◆ Processing chunk ${part + 1}/${chunks} (${slice.length} targets, indices ${part * size}-${part * size + slice.length - 1})\n`);
  return slice;
}

/** --std-module (YAML on stdin) / --module-url: the module saved to a temp file, run by path. */
export async function moduleSource(o: RunFlags): Promise<string | undefined> {
  if (!o.stdModule && !o.moduleUrl) return undefined;
  if (o.flow || o.module?.length) throw errors.validation('--std-module/--module-url replace -f/-m: use one or the other');
  const dir = mkdtempSync(join(tmpdir(), 'osm-module-'));
  const file = join(dir, 'module.yaml');
  if (o.stdModule) {
    const text = readFileSync(0, 'utf8');
    if (!text.trim()) throw errors.validation('--std-module: no YAML on stdin');
    writeFileSync(file, text);
  } else {
    const { fetchToFile, FetchError } = await import('../../registry/fetch.js');
    try {
      await fetchToFile(o.moduleUrl!, file, { maxBytes: 4 * 1024 * 1024, timeoutMs: 60_000, allowPrivate: true });
    } catch (err) {
      throw errors.validation(`--module-url: ${err instanceof FetchError ? err.message : (err as Error).message}`);
    }
  }
  return file;
}
