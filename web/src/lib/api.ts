/**
 * The dashboard's one way to the API: same origin, the session cookie as credential (HttpOnly, so
 * no token is ever readable here), `x-osm-csrf` on every state change, the error envelope turned
 * into an ApiError carrying the server's message and status.
 */

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type Query = Record<string, string | number | boolean | undefined | null>;

/** `path?query` with empty values left out. */
export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called whenever the API answers 401 (session expired or logged out elsewhere). */
export function onUnauthorized(fn: Listener): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

/** Tells every listener the session is gone (used by the stream client too). */
export function signalUnauthorized(): void {
  for (const fn of unauthorizedListeners) fn();
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  query?: Query;
  /** A JSON body (objects), or text/FormData sent as they are. */
  body?: unknown;
  /** Content type of a string body (default text/plain). */
  contentType?: string;
  signal?: AbortSignal;
  /** Do not signal 401s (the login request itself). */
  quiet401?: boolean;
}

/** Headers every state-changing request carries (a form of another site cannot set them). */
export const CSRF_HEADERS = { 'x-osm-csrf': '1' } as const;

/** One request; resolves with the Response (ok status) or throws an ApiError. */
export async function request(path: string, opts: RequestOptions = {}): Promise<Response> {
  const method = opts.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  let body: BodyInit | undefined;
  if (method !== 'GET') Object.assign(headers, CSRF_HEADERS);
  if (opts.body instanceof FormData || opts.body instanceof Blob) body = opts.body;
  else if (typeof opts.body === 'string') {
    body = opts.body;
    headers['content-type'] = opts.contentType ?? 'text/plain';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  let res: Response;
  try {
    res = await fetch(withQuery(path, opts.query), { method, headers, body, credentials: 'same-origin', signal: opts.signal });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError('The server cannot be reached', 0);
  }
  if (!res.ok) {
    let message = `${res.status} ${res.statusText}`;
    try {
      const j = (await res.json()) as { message?: string };
      if (j && typeof j.message === 'string') message = j.message;
    } catch {
      /* not the envelope */
    }
    if (res.status === 401 && !opts.quiet401) signalUnauthorized();
    throw new ApiError(message, res.status);
  }
  return res;
}

/** A JSON request. */
export async function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const res = await request(path, opts);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** A text request (YAML, logs). */
export async function apiText(path: string, opts: RequestOptions = {}): Promise<string> {
  return (await request(path, opts)).text();
}

/** The list envelope of the API. */
export interface List<T> {
  data: T[];
  pagination: { total: number; offset: number; limit: number };
}

/** Saves a Blob under a file name (a temporary object URL, revoked right after). */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
