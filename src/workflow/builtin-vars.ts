/**
 * The built-in variables injected into every module/flow execution (reference workflow-engine
 * §2.3). Names must stay within `BUILTIN_VARIABLE_NAMES` (builtins.ts) — the linter relies on it.
 * The caller owns side effects: it creates/removes TempDir and supplies the run ids.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import { REFERENCE_VERSION } from '../version.js';
import { analyzeTarget, type HeuristicsLevel } from './heuristics.js';

export interface BuiltinPaths {
  base: string;
  binaries: string;
  data: string;
  configs: string;
  agentConfigs: string;
  scripts: string;
  workflows: string;
  markdownTemplates: string;
  snapshot: string;
  workspaces: string;
}

export interface ScanTactic {
  aggressive: number;
  default: number;
  gently: number;
}

export interface BuiltinInput {
  target: string;
  targetFile?: string;
  paths: BuiltinPaths;
  tactic?: string;
  scanTactic?: ScanTactic;
  threadsHold?: number;
  heuristics?: HeuristicsLevel;
  space?: string;
  workspacesOverride?: string;
  runUuid: string;
  dbRunId?: number;
  moduleName: string;
  flowName?: string;
  tempDir?: string;
  hooksEnabled?: boolean;
  excludeModules?: string[];
  fuzzyExcludeModules?: string[];
  now?: Date;
  /** Chunk mode (`--chunk-*`). */
  chunk?: { index: number; size: number; total: number; start: number; end: number };
  /** Event-triggered runs: the event envelope as JSON text. */
  eventEnvelope?: string;
  /** Folder relative file targets are resolved against. */
  cwd?: string;
}

export const DEFAULT_SCAN_TACTIC: ScanTactic = { aggressive: 40, default: 10, gently: 5 };

/** Threads for a tactic: aggressive|fast / gently|thorough / default; ≤0 → 10; threadsHold > 0 wins. */
export function tacticThreads(tactic: string | undefined, scan: ScanTactic = DEFAULT_SCAN_TACTIC, threadsHold?: number): { threads: number; baseThreads: number } {
  const t = (tactic ?? 'default').toLowerCase();
  let threads = t === 'aggressive' || t === 'fast' ? scan.aggressive : t === 'gently' || t === 'thorough' ? scan.gently : scan.default;
  if (!Number.isFinite(threads) || threads <= 0) threads = 10;
  if (threadsHold !== undefined && Number.isInteger(threadsHold) && threadsHold > 0) threads = threadsHold;
  return { threads, baseThreads: Math.max(1, Math.floor(threads / 2)) };
}

const GO_ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

interface Platform {
  os: string;
  arch: string;
  inDocker: boolean;
  inKubernetes: boolean;
  cloud: string;
}

const CLOUD_VENDORS: Array<[RegExp, string]> = [
  [/amazon|aws/, 'aws'],
  [/google/, 'gcp'],
  [/microsoft/, 'azure'],
  [/digitalocean/, 'digitalocean'],
  [/linode|akamai/, 'linode'],
  [/vultr/, 'vultr'],
  [/hetzner/, 'hetzner'],
  [/oracle/, 'oracle'],
];

function detectCloud(): string {
  if (process.platform !== 'linux') return 'on-prem';
  const texts = ['/sys/class/dmi/id/sys_vendor', '/sys/class/dmi/id/product_name', '/sys/class/dmi/id/bios_vendor', '/sys/class/dmi/id/chassis_asset_tag']
    .map(readText)
    .filter((t): t is string => t !== undefined);
  if (texts.length === 0) return 'unknown';
  const joined = texts.join(' ').toLowerCase();
  for (const [re, name] of CLOUD_VENDORS) if (re.test(joined)) return name;
  return 'on-prem';
}

let platformCache: Platform | undefined;

/** Platform facts (cached: they cannot change during the process lifetime). */
export function platformInfo(): Platform {
  if (platformCache) return platformCache;
  const cgroup = process.platform === 'linux' ? (readText('/proc/1/cgroup') ?? '') : '';
  platformCache = {
    os: process.platform === 'win32' ? 'windows' : process.platform,
    arch: GO_ARCH[process.arch] ?? process.arch,
    inDocker: existsSync('/.dockerenv') || cgroup.includes('/docker/'),
    inKubernetes: existsSync('/var/run/secrets/kubernetes.io/serviceaccount') || cgroup.includes('/kubepods') || cgroup.includes('/kubelet/'),
    cloud: detectCloud(),
  };
  return platformCache;
}

const pad = (n: number) => String(n).padStart(2, '0');
const localDate = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
const localTime = (d: Date) => `${localDate(d)}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;

function randomLower(n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += String.fromCharCode(97 + randomInt(26));
  return out;
}

function eventVars(envelope: string): Record<string, unknown> {
  const out: Record<string, unknown> = { EventEnvelope: envelope };
  let parsed: unknown;
  try {
    parsed = JSON.parse(envelope);
  } catch {
    return out;
  }
  if (!parsed || typeof parsed !== 'object') return out;
  const env = parsed as Record<string, unknown>;
  if (typeof env.topic === 'string') out.EventTopic = env.topic;
  if (typeof env.source === 'string') out.EventSource = env.source;
  if (typeof env.data_type === 'string') out.EventDataType = env.data_type;
  if (typeof env.timestamp === 'string') out.EventTimestamp = env.timestamp;
  if (env.data !== undefined && env.data !== null) out.EventData = JSON.stringify(env.data);
  return out;
}

/** Builds the built-in variable map for one module/flow execution against one target. */
export function builtinVariables(input: BuiltinInput): Record<string, unknown> {
  const now = input.now ?? new Date();
  const p = input.paths;
  const level = input.heuristics ?? 'basic';
  const workspaces = input.workspacesOverride || p.workspaces;
  const { threads, baseThreads } = tacticThreads(input.tactic, input.scanTactic, input.threadsHold);
  const platform = platformInfo();
  const analysis = analyzeTarget(input.target, { level, space: input.space, now, cwd: input.cwd });
  const space = analysis.targetSpace;
  const output = join(workspaces, space);

  const vars: Record<string, unknown> = {
    BaseFolder: p.base,
    Binaries: p.binaries,
    Data: p.data,
    ExternalData: p.data,
    ExternalConfigs: p.configs,
    ExternalAgentConfigs: p.agentConfigs,
    ExternalAgents: p.agentConfigs,
    ExternalScripts: p.scripts,
    Workflows: p.workflows,
    MarkdownTemplates: p.markdownTemplates,
    ExternalMarkdowns: p.markdownTemplates,
    SnapshotsFolder: p.snapshot,
    Workspaces: workspaces,
    threads,
    baseThreads,
    Version: REFERENCE_VERSION,
    PlatformOS: platform.os,
    PlatformArch: platform.arch,
    PlatformInDocker: platform.inDocker,
    PlatformInKubernetes: platform.inKubernetes,
    PlatformCloudProvider: platform.cloud,
    Target: input.target,
    TargetFile: input.targetFile ?? '',
    TargetSpace: space,
    Workspace: space,
    HeuristicsCheck: level,
    Output: output,
    StateExecutionLog: join(output, 'run-execution.log'),
    StateConsoleLog: join(output, 'run-console.log'),
    StateCompletedFile: join(output, 'run-completed.json'),
    StateFile: join(output, 'run-state.json'),
    StateWorkflowFile: join(output, 'run-workflow.yaml'),
    StateWorkflowFolder: join(output, 'run-modules'),
    ModuleName: input.moduleName,
    FlowName: input.flowName ?? '',
    TaskDate: localDate(now),
    Today: localDate(now),
    CurrentTime: localTime(now),
    TimeStamp: String(Math.floor(now.getTime() / 1000)),
    RunUUID: input.runUuid,
    DBRunID: input.dbRunId ?? 0,
    RandomString: randomLower(6),
    HooksEnabled: input.hooksEnabled ?? false,
    ...analysis.vars,
    // The lower-case keys the reference CLI always passes as params.
    target: input.target,
    target_file: input.targetFile ?? '',
    tactic: input.tactic ?? 'default',
    threads_hold: String(input.threadsHold ?? 0),
    exclude_modules: (input.excludeModules ?? []).join(','),
    fuzzy_exclude_modules: (input.fuzzyExcludeModules ?? []).join(','),
    space_name: input.space ?? '',
    workspaces_folder: input.workspacesOverride ?? '',
    heuristics_check: level,
  };
  if (input.flowName) vars.flow_name = input.flowName;
  if (input.tempDir) {
    vars.TempDir = input.tempDir;
    vars.TempFile = join(input.tempDir, 'osm-tmp-file');
  }
  if (input.chunk) {
    Object.assign(vars, {
      ChunkIndex: input.chunk.index,
      ChunkSize: input.chunk.size,
      TotalChunks: input.chunk.total,
      ChunkStart: input.chunk.start,
      ChunkEnd: input.chunk.end,
    });
  }
  if (input.eventEnvelope) Object.assign(vars, eventVars(input.eventEnvelope));
  return vars;
}
