/**
 * Loopback targets for the recon tests: an HTTP site with known paths and headers, and a TLS
 * server with a deliberately weak configuration (TLS 1.0 allowed, an expired self-signed
 * certificate committed under test/fixtures/tools/tls). Both listen on 127.0.0.1, random ports.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ROOT } from './cli.js';

export const TOOLS_FIXTURES = join(ROOT, 'test/fixtures/tools');
export const WORDLIST = join(TOOLS_FIXTURES, 'wordlist.txt');

/** Paths the web target answers with 200 (everything else is 404; /login redirects). */
export const SITE_PATHS = ['/admin', '/backup.zip', '/robots.txt'] as const;

export interface Target {
  port: number;
  url: string;
  close: () => Promise<void>;
}

const PAGES: Record<string, { type: string; body: string }> = {
  '/': { type: 'text/html', body: '<html><head><title>OSM Test Site</title><meta name="generator" content="WordPress 5.8"></head><body>hello</body></html>\n' },
  '/admin': { type: 'text/html', body: '<html><head><title>Admin Panel</title></head><body>admin</body></html>\n' },
  '/backup.zip': { type: 'application/zip', body: 'PK\u0005\u0006not-really-a-zip\n' },
  '/robots.txt': { type: 'text/plain', body: 'User-agent: *\nDisallow: /admin\n' },
};

function handler(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0]!;
  res.setHeader('Server', 'Apache/2.4.41 (Ubuntu)');
  res.setHeader('X-Powered-By', 'PHP/7.4.3');
  // Closing after each response lets nmap's service probes finish without waiting for a timeout.
  res.setHeader('Connection', 'close');
  if (path === '/login') {
    res.writeHead(301, { Location: '/login/' });
    res.end();
    return;
  }
  const page = PAGES[path] ?? (path.endsWith('/') ? PAGES[path.slice(0, -1)] : undefined);
  if (!page) {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found\n');
    return;
  }
  res.writeHead(200, { 'Content-Type': page.type });
  res.end(req.method === 'HEAD' ? undefined : page.body);
}

function listen(server: Server, scheme: string): Promise<Target> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        port,
        url: `${scheme}://127.0.0.1:${port}`,
        close: () => new Promise<void>((r) => {
          server.closeAllConnections?.();
          server.close(() => r());
        }),
      });
    });
  });
}

/** The HTTP site. */
export function startWebTarget(): Promise<Target> {
  return listen(createHttpServer(handler), 'http');
}

/** The weak TLS site: TLS 1.0 and 1.1 accepted, legacy ciphers, an expired self-signed certificate. */
export function startTlsTarget(): Promise<Target> {
  const server = createHttpsServer(
    {
      key: readFileSync(join(TOOLS_FIXTURES, 'tls/key.pem')),
      cert: readFileSync(join(TOOLS_FIXTURES, 'tls/cert.pem')),
      minVersion: 'TLSv1',
      // Security level 0 lets OpenSSL 3 negotiate TLS 1.0/1.1 and SHA-1 suites at all.
      ciphers: 'DEFAULT:AES128-SHA:@SECLEVEL=0',
    },
    handler,
  );
  return listen(server as unknown as Server, 'https');
}
