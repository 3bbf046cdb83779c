/**
 * The dashboard in a real browser: Debian's Chromium through playwright-core (headless, no
 * sandbox, nothing that phones home, a fresh temporary profile), the built daemon, and a page
 * that records console errors and failed requests. Without a browser the tests skip with a visible
 * message; under CI=true they fail instead (.ci/run installs chromium).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Browser, Page } from 'playwright-core';
import { ROOT, type Daemon } from './daemon.js';

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'];

/** The Chromium binary ($OSM_CHROMIUM or the Debian/Ubuntu paths), or undefined. */
export function findChromium(): string | undefined {
  return [process.env.OSM_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium', '/usr/bin/google-chrome'].find((p): p is string => Boolean(p) && fs.existsSync(p!));
}

/** The reason the browser tests cannot run here, printed once; throws under CI (a missing browser must fail CI). */
export function browserOrSkip(): string | undefined {
  const exe = findChromium();
  if (exe) return exe;
  const msg = 'browser tests SKIPPED: no Chromium found (apt-get install -y chromium, or set OSM_CHROMIUM)';
  if (process.env.CI) throw new Error(`${msg}; CI must run them`);
  console.warn(`\n*** ${msg} ***\n`);
  return undefined;
}

function newest(dir: string): number {
  let max = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    max = Math.max(max, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return max;
}

/** Builds dist/web when it is missing or older than web/src. */
export function ensureWebBuilt(): void {
  const index = path.join(ROOT, 'dist', 'web', 'index.html');
  if (fs.existsSync(index) && fs.statSync(index).mtimeMs >= newest(path.join(ROOT, 'web', 'src'))) return;
  const r = spawnSync(process.execPath, [path.join(ROOT, 'web', 'build.mjs')], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0 || !fs.existsSync(index)) throw new Error(`dashboard build failed: ${r.stderr}${r.stdout}`);
}

export async function launch(executablePath: string): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
}

/** The first login of a base folder's settings file. */
export function loginOf(base: string): { username: string; password: string } {
  const s = parseYaml(fs.readFileSync(path.join(base, 'osm-settings.yaml'), 'utf8')) as { server: { simple_user_map_key: Record<string, string> } };
  const [username, password] = Object.entries(s.server.simple_user_map_key)[0]!;
  return { username, password };
}

export interface WatchedPage {
  page: Page;
  /** Console errors, page errors, failed requests and error responses seen so far. */
  problems: string[];
}

/**
 * A page in a fresh context that records every console error, uncaught page error, failed
 * request and >= 400 response of the daemon, except those `allowed` (method and path prefix).
 */
export async function watchedPage(browser: Browser, opts: { allowed?: (method: string, url: URL, status: number) => boolean; viewport?: { width: number; height: number } } = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  const allowedUrls = new Set<string>();
  page.on('response', (res) => {
    const url = new URL(res.url());
    if (res.status() < 400) return;
    if (opts.allowed?.(res.request().method(), url, res.status())) {
      allowedUrls.add(res.url());
      return;
    }
    problems.push(`${res.status()} ${res.request().method()} ${url.pathname}${url.search}`);
  });
  page.on('requestfailed', (req) => {
    const why = req.failure()?.errorText ?? '';
    // Navigating away aborts streams and pending loads: not a failure of the page.
    if (/ERR_ABORTED|NS_BINDING_ABORTED/.test(why)) return;
    problems.push(`request failed: ${req.method()} ${req.url()} ${why}`);
  });
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const loc = msg.location()?.url ?? '';
    // Chromium logs every >= 400 response as a console error: those are judged above.
    if (/^Failed to load resource/.test(msg.text()) && (allowedUrls.has(loc) || loc.includes('/osm/api/'))) return;
    problems.push(`console error: ${msg.text()} ${loc}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  return { page, problems };
}

/** Logs in through the form. */
export async function logIn(page: Page, d: Daemon, creds = loginOf(d.base)): Promise<void> {
  await page.goto(d.url);
  await page.getByLabel('Username').fill(creds.username);
  await page.getByLabel('Password').fill(creds.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}
