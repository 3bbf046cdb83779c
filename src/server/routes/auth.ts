import { z } from 'zod';
import { errors } from '../../errors.js';
import { defineRoute } from '../route.js';
import { cookieToken, SESSION_COOKIE } from '../plugins/auth.js';
import { checkLogin, endSession, issueSession } from '../../services/auth.js';
import type { RegisterRoutes } from '../app.js';

const loginBody = z.object({ username: z.string(), password: z.string() });

/** Cookie attributes of the session: HttpOnly, SameSite=Lax, Path=/, expiry = token lifetime. */
function sessionCookie(token: string, maxAgeSec: number): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSec}`;
}

/** POST /osm/api/login and /osm/api/logout (public). */
export const registerAuthRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/login', summary: 'Log in; returns a JWT and sets the session cookie', tags: ['auth'], sideEffects: 'writes',
    body: loginBody, bodyError: 'Invalid request body',
    responses: { 200: { description: 'Token', schema: z.object({ token: z.string() }) }, 401: { description: 'Invalid credentials' }, 429: { description: 'Too many failed login attempts (Retry-After header)' } },
    handler: async ({ body, reply, req }) => {
      let username = body.username;
      if (!deps.noAuth) {
        await deps.loginThrottle.check(req, username);
        if (!(await checkLogin(app, username, body.password))) {
          await deps.loginThrottle.failed(req, username);
          throw errors.invalidCredentials();
        }
      } else if (!username) {
        username = 'anonymous';
      }
      const session = await issueSession(app, username);
      reply.header('set-cookie', sessionCookie(session.token, session.maxAgeSec));
      return { token: session.token };
    },
  });
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/logout', summary: "Log out: clears the session cookie and revokes the user's session tokens", tags: ['auth'], sideEffects: 'writes',
    handler: async ({ reply, req }) => {
      const auth = req.headers.authorization;
      const bearer = auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length).trim() : undefined;
      await endSession(app, bearer || cookieToken(req));
      reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT`);
      return { message: 'Logged out' };
    },
  });
};
