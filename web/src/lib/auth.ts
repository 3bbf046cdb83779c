/**
 * Who is logged in: `GET /whoami` answers with the session cookie (or without credentials under
 * --no-auth). Log in posts the form to `/login`, which sets the HttpOnly cookie; log out posts to
 * `/logout`, which clears it and revokes the session on the server.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, onUnauthorized } from './api.js';

export type Role = 'viewer' | 'operator' | 'admin';

export interface Me {
  name: string;
  kind: string;
  role: Role;
  orgs: { uuid?: string; name?: string }[];
}

export type AuthState = { status: 'checking' } | { status: 'anonymous'; reason?: string } | { status: 'in'; me: Me } | { status: 'offline'; message: string };

let state: AuthState = { status: 'checking' };
const listeners = new Set<(s: AuthState) => void>();

function set(s: AuthState): void {
  state = s;
  for (const fn of listeners) fn(s);
}

/** Asks the server who we are. */
export async function refreshMe(): Promise<void> {
  try {
    const r = await api<{ data: Me }>('/osm/api/whoami', { quiet401: true });
    set({ status: 'in', me: r.data });
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 401) set({ status: 'anonymous' });
    else set({ status: 'offline', message: (err as Error).message });
  }
}

/** Logs in; throws the server's message ("Invalid credentials", throttling) on failure. */
export async function login(username: string, password: string): Promise<void> {
  await api('/osm/api/login', { method: 'POST', body: { username, password }, quiet401: true });
  await refreshMe();
}

/** Logs out (the server clears the cookie and revokes the session). */
export async function logout(): Promise<void> {
  try {
    await api('/osm/api/logout', { method: 'POST', quiet401: true });
  } finally {
    set({ status: 'anonymous', reason: 'You are logged out.' });
  }
}

onUnauthorized(() => {
  if (state.status === 'in' && state.me.kind !== 'no-auth') set({ status: 'anonymous', reason: 'Your session has ended; log in again.' });
});

/** The auth state; re-renders on change. */
export function useAuth(): AuthState {
  const [s, setS] = useState(state);
  useEffect(() => {
    listeners.add(setS);
    setS(state);
    return () => void listeners.delete(setS);
  }, []);
  return s;
}

const RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };

/** True when the logged-in role reaches `need` (the server enforces it anyway). */
export function can(need: Role): boolean {
  return state.status === 'in' && RANK[state.me.role] >= RANK[need];
}
