/**
 * Use cases of the binary/workflow registry, shared by `osm install` and the daemon's
 * `/registry-info`, `/registry-install` and `/install/*` routes. Trust is decided here, once:
 * the bundled registry is trusted; a caller-supplied registry is data (its commands are never run)
 * unless the CLI operator passes --trust-registry; API callers may not reach private addresses or
 * local registry files unless `server.allow_private_registry` is true. Installs are recorded as
 * events (`install.binary`, `install.workflow`).
 */
import { errors, isOsmError, messageOf } from '../errors.js';
import { isSafeName } from '../util/fs-safe.js';
import { indexWorkflows } from '../workflow/indexer.js';
import { directInfo, nixInfo } from '../registry/info.js';
import { installOneBinary, type BinaryInstallContext, type BinaryOutcome } from '../registry/install-binary.js';
import { installWithNix, nixInstalled } from '../registry/install-nix.js';
import { installWorkflowSource, redactSource } from '../registry/install-workflow.js';
import { installStatus } from '../registry/locate.js';
import { currentPlatform } from '../registry/platform.js';
import { isOptional } from '../registry/schema.js';
import { loadBundledRegistry, loadRegistry, type LoadedRegistry } from '../registry/source.js';
import type { AppContext } from './context.js';

export type RegistryMode = 'direct-fetch' | 'nix-build';
/** Who is asking: the API (untrusted input) or the CLI operator. */
export type Caller = 'api' | 'cli';

/** `registry_mode`: empty → direct-fetch; anything but the two modes → 400. */
export function parseRegistryMode(value: string | undefined | null): RegistryMode {
  const v = (value ?? '').trim();
  if (v === '' || v === 'direct-fetch') return 'direct-fetch';
  if (v === 'nix-build') return 'nix-build';
  throw errors.registryMode();
}

/** The reference's `method` (direct | nix) as a registry mode. */
export function modeFromMethod(method: string | undefined | null): RegistryMode {
  const m = (method ?? '').trim().toLowerCase();
  if (m === '' || m === 'direct' || m === 'direct-fetch') return 'direct-fetch';
  if (m === 'nix' || m === 'nix-build') return 'nix-build';
  throw errors.installMethod();
}

function allowPrivate(app: AppContext, caller: Caller): boolean {
  if (caller === 'cli') return true;
  return Boolean((app.settings().settings.server as { allow_private_registry?: boolean }).allow_private_registry);
}

interface SourceInput {
  registryUrl?: string | null;
  caller: Caller;
  /** CLI only: run the commands of a caller-supplied registry. */
  trustRegistry?: boolean;
}

function load(app: AppContext, input: SourceInput): Promise<LoadedRegistry> {
  return loadRegistry({ url: input.registryUrl ?? '', allowPrivate: allowPrivate(app, input.caller), trustCustom: input.caller === 'cli' && Boolean(input.trustRegistry) });
}

async function record(app: AppContext, topic: 'install.binary' | 'install.workflow', caller: Caller, data: Record<string, unknown>, error = ''): Promise<void> {
  try {
    await app.repos.events.insert({ topic, name: topic, source: caller, source_type: caller, data_type: 'install', data, processed: true, error });
  } catch {
    // Recording must not change the answer; a failing store shows elsewhere.
  }
}

export interface RegistryInfoInput extends SourceInput {
  mode?: string | null;
}

/** `GET /registry-info`: the registry with installed status, in the requested view. Executes nothing. */
export async function registryInfo(app: AppContext, input: RegistryInfoInput) {
  const mode = parseRegistryMode(input.mode);
  return mode === 'nix-build' ? nixInfo(await load(app, input), app.settings().paths.binaries) : await directRegistryInfo(app, input);
}

/** The direct-fetch view (also `osm install list` and `--check`). Executes nothing. */
export async function directRegistryInfo(app: AppContext, input: SourceInput) {
  return directInfo(await load(app, input), app.settings().paths.binaries);
}

/** `GET /install/status/{name}`: is one binary installed (bundled registry's probe name). */
export function binaryStatus(app: AppContext, name: string): { name: string; installed: boolean; path: string } {
  if (!isSafeName(name)) throw errors.invalidBinaryName(name);
  const entry = loadBundledRegistry().registry.entries.get(name);
  return { name, ...installStatus(name, entry, app.settings().paths.binaries) };
}

export interface BinaryInstallInput extends SourceInput {
  names?: string[] | null;
  installAll?: boolean;
  installOptional?: boolean;
  registryMode?: string | null;
  /** Called before and after each binary (CLI progress lines). */
  onProgress?: (event: { phase: 'start'; name: string } | { phase: 'done'; outcome: BinaryOutcome }) => void;
}

export interface BinaryInstallResult {
  message: string;
  registry_mode: RegistryMode;
  installed: string[];
  installed_count: number;
  binaries_folder: string;
  failed: { name: string; error: string }[];
  failed_count: number;
  /** Per installed binary: what was done and where it is. */
  details: { name: string; action: string; path: string }[];
}

function selectNames(loaded: LoadedRegistry, input: BinaryInstallInput): string[] {
  if (input.installAll) {
    return [...loaded.registry.entries].filter(([, e]) => input.installOptional || !isOptional(e)).map(([n]) => n);
  }
  const names = [...new Set((input.names ?? []).map((n) => String(n).trim()).filter(Boolean))];
  if (names.length === 0) throw errors.installNamesRequired();
  return names;
}

/** `POST /registry-install` type binary and `osm install binary`: installs synchronously, one by one. */
export async function installBinaries(app: AppContext, input: BinaryInstallInput): Promise<BinaryInstallResult> {
  const mode = parseRegistryMode(input.registryMode);
  const binaries = app.settings().paths.binaries;
  if (mode === 'nix-build' && !nixInstalled(binaries)) throw errors.nixNotInstalled();
  if (!input.installAll && !(input.names ?? []).some((n) => String(n).trim() !== '')) throw errors.installNamesRequired();
  const loaded = await load(app, input);
  const names = selectNames(loaded, input);
  const ctx: BinaryInstallContext = { binaries, platform: currentPlatform(), trusted: loaded.trusted, allowPrivate: allowPrivate(app, input.caller) };
  const outcomes: BinaryOutcome[] = [];
  for (const name of names) {
    input.onProgress?.({ phase: 'start', name });
    const entry = loaded.registry.entries.get(name);
    const outcome = mode === 'nix-build' && entry ? await installWithNix(name, entry, ctx) : await installOneBinary(name, entry, ctx);
    outcomes.push(outcome);
    input.onProgress?.({ phase: 'done', outcome });
  }
  const ok = outcomes.filter((o) => o.ok);
  const failed = outcomes.filter((o) => !o.ok).map((o) => ({ name: o.name, error: o.error ?? 'failed' }));
  const result: BinaryInstallResult = {
    message: mode === 'nix-build' ? 'Nix binary installation completed' : 'Binary installation completed',
    registry_mode: mode,
    installed: ok.map((o) => o.name),
    installed_count: ok.length,
    binaries_folder: binaries,
    failed,
    failed_count: failed.length,
    details: ok.map((o) => ({ name: o.name, action: o.action ?? 'present', path: o.path ?? '' })),
  };
  await record(app, 'install.binary', input.caller, {
    registry_mode: mode, registry: redactSource(loaded.url), registry_source: loaded.source, trusted: loaded.trusted,
    requested: names, installed: result.installed, failed,
  }, failed.map((f) => `${f.name}: ${f.error}`).join('; '));
  return result;
}

export interface WorkflowInstallInput {
  source?: string | null;
  caller: Caller;
}

export interface WorkflowInstallResponse {
  message: string;
  source: string;
  workflow_folder: string;
  backup: string;
  indexed: { added: number; updated: number; removed: number };
}

// One workflow install at a time per process: two concurrent swaps would back up each other.
let workflowLock: Promise<unknown> = Promise.resolve();

/** `POST /registry-install` type workflow and `osm install workflow`: replace, back up, re-index. */
export async function installWorkflow(app: AppContext, input: WorkflowInstallInput): Promise<WorkflowInstallResponse> {
  const source = (input.source ?? '').trim();
  if (source === '') throw errors.workflowSourceRequired();
  const shown = redactSource(source);
  const run = async (): Promise<WorkflowInstallResponse> => {
    const workflowsDir = app.settings().paths.workflows;
    try {
      const r = await installWorkflowSource({ source, workflowsDir, allowPrivate: allowPrivate(app, input.caller) });
      const idx = await indexWorkflows(app.repos, r.workflow_folder);
      const response = {
        message: 'Workflow installed successfully',
        source: shown,
        workflow_folder: r.workflow_folder,
        backup: r.backup,
        indexed: { added: idx.added, updated: idx.updated, removed: idx.removed },
      };
      await record(app, 'install.workflow', input.caller, { source: shown, kind: r.kind, workflow_folder: r.workflow_folder, backup: r.backup, files: r.files, yaml_files: r.yaml_files, indexed: response.indexed, index_errors: idx.errors.length });
      return response;
    } catch (err) {
      const detail = redactSource(messageOf(err));
      await record(app, 'install.workflow', input.caller, { source: shown, workflow_folder: workflowsDir }, detail);
      if (isOsmError(err)) throw err;
      throw errors.workflowInstall(detail);
    }
  };
  const next = workflowLock.then(run, run);
  workflowLock = next.catch(() => undefined);
  return next;
}

export interface InstallRequest {
  type?: unknown;
  names?: string[] | null;
  install_all?: boolean;
  install_optional?: boolean;
  source?: string | null;
  registry_url?: string | null;
  registry_mode?: string | null;
}

/** `POST /registry-install`: dispatch on `type`. */
export async function installFromRequest(app: AppContext, body: InstallRequest, caller: Caller): Promise<BinaryInstallResult | WorkflowInstallResponse> {
  if (body.type === 'workflow') return installWorkflow(app, { source: body.source, caller });
  if (body.type !== 'binary') throw errors.installType();
  return installBinaries(app, {
    names: body.names, installAll: body.install_all, installOptional: body.install_optional,
    registryUrl: body.registry_url, registryMode: body.registry_mode, caller,
  });
}
