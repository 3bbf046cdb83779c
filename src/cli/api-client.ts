/** Calls to a running daemon's API for commands given `--server` (the same credentials and the same 401/403 as any client). */
import { request } from 'undici';
import { errors } from '../errors.js';

/** Where a command sends its requests: `--server` / `OSM_SERVER` and `--api-key` / `OSM_API_KEY`. */
export interface RemoteTarget {
  server: string;
  apiKey?: string;
}

/** The remote target of a command's options, or undefined to work on the local base folder. */
export function remoteTarget(o: { server?: string; apiKey?: string }): RemoteTarget | undefined {
  const server = o.server ?? process.env.OSM_SERVER;
  if (!server) return undefined;
  return { server, apiKey: o.apiKey ?? process.env.OSM_API_KEY };
}

/**
 * One JSON request to `path` under `base`; an error answer becomes an Error with the server's
 * status (`.status`) and message (`server 403: Forbidden: this requires the admin role …`). The credential
 * goes in `x-osm-api-key`, which takes both the settings' key and personal API tokens.
 */
export async function callApi<T>(base: string, path: string, apiKey: string | undefined, init: { method?: string; body?: unknown; raw?: boolean } = {}): Promise<T> {
  const root = base.endsWith('/') ? base : `${base}/`;
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(new URL(path.replace(/^\//, ''), root), {
      method: (init.method ?? 'GET') as never,
      headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(apiKey ? { 'x-osm-api-key': apiKey } : {}) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  } catch (err) {
    throw errors.unavailable(`cannot reach ${base}: ${(err as Error).message}`);
  }
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (res.statusCode >= 400) {
    const msg = (json as { message?: string })?.message ?? text.slice(0, 300);
    throw Object.assign(new Error(`server ${res.statusCode}: ${msg}`), { status: res.statusCode });
  }
  return (init.raw ? text : json) as T;
}
