import { z } from 'zod';
import { errors } from '../../errors.js';
import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';
import {
  binaryStatus,
  installBinaries,
  installFromRequest,
  installWorkflow,
  modeFromMethod,
  registryInfo,
} from '../../services/registry.js';

const text = (max: number) => z.string().max(max, `at most ${max} characters`);

const infoQuery = z.object({
  registry_mode: text(50).optional(),
  registry_url: text(4096).optional(),
});

const installBody = z.object({
  type: z.unknown().optional(),
  names: z.array(text(200)).max(1000, 'at most 1000 names').nullable().optional(),
  install_all: z.boolean().optional(),
  install_optional: z.boolean().optional(),
  source: text(4096).nullable().optional(),
  registry_url: text(4096).nullable().optional(),
  registry_mode: text(50).nullable().optional(),
});

const INSTALL_RESPONSES = {
  200: { description: 'Binary installation completed (per-binary failures listed in failed[]) / Workflow installed successfully' },
  400: { description: "type must be 'binary' or 'workflow' / names array is required … / source is required … / Nix is not installed … / Failed to load registry: <refused registry_url>" },
  500: { description: 'Failed to load registry: <detail> / Failed to install workflow: <detail>' },
};

/**
 * Registry and installation. GET routes only read (a registry's `valide-command` is never run
 * there); installs execute and are authenticated and recorded as events.
 */
export const registerRegistryRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/registry-info', summary: 'Binary registry with installed status (direct-fetch or nix-build view)', tags: ['install'], sideEffects: 'none',
    query: infoQuery,
    responses: {
      200: { description: 'direct-fetch: { registry_mode, registry_url, binaries }; nix-build: { registry_mode, nix_installed, categories }' },
      400: { description: "registry_mode must be 'direct-fetch' or 'nix-build' / Failed to load registry: <refused registry_url>" },
      500: { description: 'Failed to load registry: <detail>' },
    },
    handler: ({ query }) => registryInfo(app, { mode: query.registry_mode, registryUrl: query.registry_url, caller: 'api' }),
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/registry-install', summary: 'Install binaries (direct-fetch or nix-build) or replace the workflows folder', tags: ['install'], sideEffects: 'executes',
    body: installBody,
    responses: INSTALL_RESPONSES,
    handler: ({ body }) => installFromRequest(app, body, 'api'),
  });

  // The reference's other shapes, thin aliases onto the same services.
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/install/registry', summary: 'Alias of registry-info (method=direct|nix)', tags: ['install'], sideEffects: 'none',
    query: z.object({ method: text(50).optional() }),
    handler: ({ query }) => registryInfo(app, { mode: modeFromMethod(query.method), caller: 'api' }),
  });

  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/install/status/:binary_name', summary: 'Whether one binary is installed (binaries folder or PATH)', tags: ['install'], sideEffects: 'none',
    params: z.object({ binary_name: text(200) }),
    responses: { 200: { description: '{ name, installed, path }' }, 400: { description: 'Invalid binary name: <name>' } },
    handler: ({ params }) => binaryStatus(app, params.binary_name),
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/install/binary', summary: 'Install one binary from the bundled registry (method=direct|nix)', tags: ['install'], sideEffects: 'executes',
    body: z.object({ name: text(200).optional(), method: text(50).optional() }),
    responses: INSTALL_RESPONSES,
    handler: ({ body }) => {
      const name = (body.name ?? '').trim();
      if (name === '') throw errors.installNameRequired();
      return installBinaries(app, { names: [name], registryMode: modeFromMethod(body.method), caller: 'api' });
    },
  });

  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/install', summary: 'Install a binary (name) or a workflow source (name = source)', tags: ['install'], sideEffects: 'executes',
    body: z.object({ type: z.unknown().optional(), name: text(4096).optional() }),
    responses: INSTALL_RESPONSES,
    handler: ({ body }) => {
      if (body.type === 'workflow') return installWorkflow(app, { source: body.name, caller: 'api' });
      if (body.type !== 'binary') throw errors.installType();
      const name = (body.name ?? '').trim();
      if (name === '') throw errors.installNameRequired();
      return installBinaries(app, { names: [name], caller: 'api' });
    },
  });
};
