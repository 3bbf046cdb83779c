/**
 * The `registry-info` answers (server-api §8.2), built from a loaded registry and file-system
 * look-ups only — this runs on a GET and never executes anything. nix-build categories come from
 * the entries' first tag (`port-scan` → "Port Scan"), since osm has no flake.nix.
 */
import { installStatus } from './locate.js';
import { nixInstalled } from './install-nix.js';
import { entryForResponse, isOptional, type RegistryEntry } from './schema.js';
import type { LoadedRegistry } from './source.js';

export interface DirectBinaryInfo extends Record<string, unknown> {
  installed: boolean;
  optional: boolean;
  path: string;
}

export interface NixTool {
  name: string;
  desc: string;
  tags: string[];
  version: string;
  repo_link: string;
  installed: boolean;
  path: string;
  nix_package?: string;
}

/** `port-scan` → "Port Scan"; no usable tag → "Other". */
export function categoryName(entry: RegistryEntry): string {
  const tag = (entry.tags ?? []).find((t) => t.trim() !== '' && t.toLowerCase() !== 'optional');
  if (!tag) return 'Other';
  return tag
    .trim()
    .split(/[-_\s]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())
    .join(' ');
}

/** direct-fetch: every entry with installed/optional/path. */
export function directInfo(loaded: LoadedRegistry, binaries: string, pathEnv?: string) {
  const out: Record<string, DirectBinaryInfo> = {};
  for (const [name, entry] of loaded.registry.entries) {
    const status = installStatus(name, entry, binaries, pathEnv);
    out[name] = { ...entryForResponse(entry), installed: status.installed, optional: isOptional(entry), path: status.path };
  }
  return {
    registry_mode: 'direct-fetch' as const,
    registry_url: loaded.url,
    registry_source: loaded.source,
    trusted: loaded.trusted,
    ...(loaded.registry.lastUpdateAt ? { last_update_at: loaded.registry.lastUpdateAt } : {}),
    binaries: out,
  };
}

/** nix-build: tools grouped in categories (sorted), plus whether `nix` is available. */
export function nixInfo(loaded: LoadedRegistry, binaries: string, pathEnv?: string) {
  const groups = new Map<string, NixTool[]>();
  for (const [name, entry] of loaded.registry.entries) {
    const status = installStatus(name, entry, binaries, pathEnv);
    const tool: NixTool = {
      name,
      desc: entry.desc ?? '',
      tags: entry.tags ?? [],
      version: entry.version ?? '',
      repo_link: entry.repo_link ?? '',
      installed: status.installed,
      path: status.path,
      ...(entry.nix_package ? { nix_package: entry.nix_package } : {}),
    };
    const cat = categoryName(entry);
    groups.set(cat, [...(groups.get(cat) ?? []), tool]);
  }
  const categories = [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, tools]) => ({ name, tools: tools.sort((x, y) => x.name.localeCompare(y.name)) }));
  return {
    registry_mode: 'nix-build' as const,
    registry_url: loaded.url,
    registry_source: loaded.source,
    nix_installed: nixInstalled(binaries, pathEnv),
    categories,
  };
}
