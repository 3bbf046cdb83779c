/**
 * The dashboard in real Chromium against the real built daemon: logging in (and staying logged in
 * across a reload), every page without console errors or failed requests, starting a run from the
 * form and watching its log grow without a reload, cancelling a long run through the confirmation
 * dialog, filtering assets, and hostile text (asset titles, tool output) staying text.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { api, ensureBuilt, killAllDaemons, startDaemon, stopDaemon, until, type Daemon } from '../helpers/daemon.js';
import { browserOrSkip, ensureWebBuilt, launch, logIn, loginOf, watchedPage } from '../helpers/browser.js';
import { tempDir } from '../helpers/tmp.js';

const chromium = browserOrSkip();
const XSS_TITLE = '<img src=x onerror="window.__xss=1">';
const XSS_LINE = '<img src=x onerror=window.__xss=2>';

let d: Daemon;
let browser: Browser;
let tmp: { dir: string; cleanup: () => void };
let streams: { logs: boolean; events: boolean };

/** Modules that run with coreutils only: one that writes lines over a few seconds, one that waits. */
function writeWorkflows(dir: string): void {
  fs.mkdirSync(path.join(dir, 'modules'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'modules', 'browser-slow.yaml'),
    `kind: module
name: browser-slow
description: writes a line, waits, writes more
params:
  - name: greeting
    default: hello
steps:
  - name: first
    type: bash
    command: "echo alpha-line-1 {{greeting}}; echo '${XSS_LINE}'"
  - name: second
    type: bash
    command: "sleep 3; echo beta-line-2"
  - name: third
    type: bash
    command: "sleep 2; echo gamma-line-3"
`,
  );
  fs.writeFileSync(
    path.join(dir, 'modules', 'browser-long.yaml'),
    `kind: module
name: browser-long
description: waits a long time
steps:
  - name: started
    type: bash
    command: echo long-run-started
  - name: wait
    type: bash
    command: sleep 300
`,
  );
}

async function seedAssets(): Promise<void> {
  for (let i = 0; i < 12; i++) {
    const host = `${i % 2 ? 'api' : 'www'}${i}.browser.test`;
    const asset = { asset_value: host, url: `https://${host}/`, status_code: 200, title: i === 0 ? XSS_TITLE : `Page ${i}`, asset_type: 'web', tech: ['nginx'] };
    const r = await api(d, 'POST', '/osm/api/functions/eval', { script: `db_insert_asset("browser.test", ${JSON.stringify(JSON.stringify(asset))})` });
    expect(r.status, r.text).toBe(200);
  }
}

beforeAll(async () => {
  if (!chromium) return;
  ensureBuilt();
  ensureWebBuilt();
  tmp = tempDir('osm-browser-');
  writeWorkflows(path.join(tmp.dir, 'workflows'));
  d = await startDaemon(path.join(tmp.dir, 'base'), { workflows: path.join(tmp.dir, 'workflows') });
  browser = await launch(chromium);
  const spec = (await api(d, 'GET', '/openapi.json')).json as { paths: Record<string, Record<string, unknown>> };
  streams = { logs: Boolean(spec.paths['/osm/api/runs/{id}/logs']?.get), events: Boolean(spec.paths['/osm/api/events/stream']?.get) };
  await seedAssets();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopDaemon(d);
  await killAllDaemons();
  tmp?.cleanup();
});

/**
 * Answers a page may get by design: the session check before logging in, a server that is not a
 * distributed master (the Workers page explains it), and, until the server has them, the two
 * live streams (the pages fall back to polling).
 */
function expected(method: string, url: URL, status: number): boolean {
  if (url.pathname === '/osm/api/whoami' && status === 401) return true;
  if ((url.pathname === '/osm/api/workers' || url.pathname === '/osm/api/tasks') && status === 400) return true;
  if (status === 404 && !streams.events && url.pathname === '/osm/api/events/stream') return true;
  if (status === 404 && !streams.logs && /^\/osm\/api\/runs\/[^/]+\/logs$/.test(url.pathname)) return true;
  return false;
}

describe.skipIf(!chromium)('the dashboard in Chromium', () => {
  it('logs in: wrong credentials show the error, right ones open the overview, a reload keeps the session, log out ends it', async () => {
    const { page, problems } = await watchedPage(browser, { allowed: (m, u, s) => expected(m, u, s) || (u.pathname === '/osm/api/login' && s === 401) });
    const creds = loginOf(d.base);
    await page.goto(d.url);
    await page.getByLabel('Username').fill(creds.username);
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Invalid credentials');
    await page.getByLabel('Password').fill(creds.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    // The session is the HttpOnly cookie: nothing for a script to read.
    expect(await page.evaluate<string>('document.cookie')).not.toContain('osmedeus_session');
    expect(await page.evaluate<string>('JSON.stringify(localStorage)')).toBe('{}');
    await page.reload();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await page.getByLabel('Username').count()).toBe(0);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Username').waitFor();
    await page.reload();
    await page.getByLabel('Username').waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('renders every page without console errors or failed requests, at desktop and phone widths', async () => {
    const r = await api(d, 'POST', '/osm/api/runs', { module: 'browser-slow', target: 'pages.browser.test' });
    expect(r.status, r.text).toBe(202);
    await until(async () => (await api(d, 'GET', `/osm/api/runs/${r.json.run_uuid}`)).json.data.status === 'completed', 'the run to complete');
    const vuln = await api(d, 'POST', '/osm/api/vulnerabilities', { workspace: 'browser.test', vuln_title: XSS_TITLE, severity: 'high', asset_value: 'https://www0.browser.test/', detail_http_request: XSS_LINE });
    expect(vuln.status).toBe(201);
    const pages: [string, string][] = [
      ['/overview', 'Overview'],
      ['/runs', 'Runs'],
      ['/runs/new', 'New run'],
      [`/runs/${r.json.run_uuid}`, 'pages.browser.test'],
      ['/workflows', 'Workflows'],
      ['/workflows/browser-slow', 'browser-slow'],
      ['/workspaces', 'Workspaces'],
      ['/workspaces/browser.test', 'browser.test'],
      ['/workspaces/browser.test?tab=changes', 'browser.test'],
      ['/workspaces/browser.test?tab=files', 'browser.test'],
      ['/assets', 'Assets'],
      ['/vulnerabilities', 'Vulnerabilities'],
      [`/vulnerabilities/${vuln.json.data.id}`, XSS_TITLE],
      ['/schedules', 'Schedules'],
      ['/events', 'Events'],
      ['/workers', 'Workers'],
      ['/settings', 'Settings'],
    ];
    for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
      const { page, problems } = await watchedPage(browser, { allowed: expected, viewport });
      await logIn(page, d);
      for (const [url, heading] of pages) {
        await page.goto(`${d.url}${url}`);
        await page.getByRole('heading', { level: 1, name: heading }).first().waitFor();
        // Not 'networkidle': the pages keep the live event stream open for as long as they show.
        await page.waitForLoadState('load');
        // No page shows a spinner forever or an error box.
        await expect.poll(() => page.locator('.state.loading').count(), { timeout: 10_000 }).toBe(0);
        expect(await page.locator('.state.error').count(), `${url} shows an error`).toBe(0);
        // Nothing overflows the viewport sideways (tables scroll inside their own box).
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        expect(overflow, `${url} at ${viewport.width}px`).toBeLessThanOrEqual(1);
      }
      // The settings editor holds the redacted file: no secret in clear.
      await page.goto(`${d.url}/settings`);
      const yaml = await page.getByLabel('Settings YAML').inputValue();
      expect(yaml).toContain('[REDACTED]');
      expect(yaml).not.toContain(d.apiKey);
      expect(yaml).not.toContain(loginOf(d.base).password);
      expect(problems).toEqual([]);
      expect(await page.evaluate<number | undefined>('window.__xss')).toBeUndefined();
      await page.context().close();
    }
  }, 180_000);

  it('starts a run from the form and shows its log lines while it runs, without a reload', async () => {
    const { page, problems } = await watchedPage(browser, { allowed: expected });
    await logIn(page, d);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Runs' }).click();
    await page.getByRole('link', { name: 'New run' }).click();
    await page.getByLabel('Workflow or Module').fill('browser-slow');
    await page.getByLabel('greeting').fill('from-the-form');
    await page.getByLabel('Target', { exact: true }).fill('live.browser.test');
    await page.evaluate('window.__sameDocument = true');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.getByRole('heading', { name: 'live.browser.test' }).waitFor();
    const log = page.getByTestId('log-lines');
    // The first step's line is on screen while the run is still running.
    await log.getByText('alpha-line-1 from-the-form').waitFor({ timeout: 30_000 });
    const status = await page.locator('h1 .status').textContent();
    expect(['running', 'queued', 'pending']).toContain(status);
    expect(await log.getByText('gamma-line-3').count()).toBe(0);
    // The rest arrives on the same page, and the status turns to its final word.
    await log.getByText('gamma-line-3').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.locator('h1 .status').textContent(), { timeout: 20_000 }).toBe('completed');
    expect(await page.evaluate<boolean | undefined>('window.__sameDocument')).toBe(true);
    // Tool output is text: the probe line is shown as written and never ran.
    await log.getByText(XSS_LINE).waitFor();
    expect(await page.evaluate<number | undefined>('window.__xss')).toBeUndefined();
    expect(await log.locator('img').count()).toBe(0);
    // Search filters the lines.
    await page.getByLabel('Search the log').fill('beta');
    await expect.poll(() => log.locator('.log-line').count()).toBe(1);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 90_000);

  it('reads the live log stream as the API documents it (SSE lines, step changes, end), resuming with Last-Event-ID', async () => {
    const r = await api(d, 'POST', '/osm/api/runs', { module: 'browser-slow', target: 'sse.browser.test' });
    await until(async () => (await api(d, 'GET', `/osm/api/runs/${r.json.run_uuid}`)).json.data.status === 'completed', 'the run to complete');
    const { page, problems } = await watchedPage(browser, { allowed: expected });
    const asked: (string | undefined)[] = [];
    // The stream of GET /runs/{id}/logs, answered here in two connections: the first drops after
    // two lines, the second must resume after the last id it saw.
    await page.route(/\/osm\/api\/runs\/[^/]+\/logs$/, async (route) => {
      const last = route.request().headers()['last-event-id'];
      asked.push(last);
      const sse = (id: number, event: string, data: object) => `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
      const body =
        last === undefined
          ? sse(1, 'line', { step: 'first', stream: 'stdout', line: 'streamed-line-1', ts: new Date().toISOString() }) + sse(2, 'line', { step: 'first', stream: 'stderr', line: `streamed-err ${XSS_LINE}` })
          : sse(3, 'step', { step: 'first', status: 'completed', exit_code: 0, duration_ms: 5 }) + sse(4, 'line', { step: 'second', stream: 'stdout', line: 'streamed-line-3' }) + sse(5, 'end', { status: 'completed' });
      await route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, body });
    });
    await logIn(page, d);
    await page.goto(`${d.url}/runs/${r.json.run_uuid}`);
    const log = page.getByTestId('log-lines');
    await log.getByText('streamed-line-3').waitFor();
    expect(asked).toEqual([undefined, '2']);
    expect(await log.locator('.log-line').allTextContents()).toEqual(['firststreamed-line-1', `firststreamed-err ${XSS_LINE}`, 'secondstreamed-line-3']);
    expect(await log.locator('.log-line.err').count()).toBe(1);
    expect(await page.evaluate<number | undefined>('window.__xss')).toBeUndefined();
    await page.getByRole('combobox', { name: /^Step/ }).selectOption('second');
    expect(await log.locator('.log-line').allTextContents()).toEqual(['streamed-line-3']);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('cancels a long run after the confirmation dialog', async () => {
    const r = await api(d, 'POST', '/osm/api/runs', { module: 'browser-long', target: 'cancel.browser.test' });
    expect(r.status, r.text).toBe(202);
    await until(async () => (await api(d, 'GET', `/osm/api/runs/${r.json.run_uuid}`)).json.data.status === 'running', 'the long run to start');
    const { page, problems } = await watchedPage(browser, { allowed: expected });
    await logIn(page, d);
    await page.goto(`${d.url}/runs/${r.json.run_uuid}`);
    await page.getByRole('heading', { name: 'cancel.browser.test' }).waitFor();
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this run?' });
    await dialog.waitFor();
    // Backing out leaves the run alone.
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    expect((await api(d, 'GET', `/osm/api/runs/${r.json.run_uuid}`)).json.data.status).toBe('running');
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await dialog.getByRole('button', { name: 'Cancel run' }).click();
    await expect.poll(() => page.locator('h1 .status').textContent(), { timeout: 20_000 }).toBe('cancelled');
    expect((await api(d, 'GET', `/osm/api/runs/${r.json.run_uuid}`)).json.data.status).toBe('cancelled');
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  }, 90_000);

  it('under --no-auth opens without a login page; the keyboard reaches the skip link first', async () => {
    const open = await startDaemon(path.join(tmp.dir, 'open'), { serveArgs: ['--no-schedule', '--no-auth'] });
    try {
      const { page, problems } = await watchedPage(browser, { allowed: expected });
      await page.goto(open.url);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      expect(await page.getByLabel('Username').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Log out' }).count()).toBe(0);
      await page.keyboard.press('Tab');
      expect(await page.evaluate<string | undefined>('document.activeElement?.textContent')).toBe('Skip to content');
      await page.keyboard.press('Enter');
      expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('main');
      expect(problems).toEqual([]);
      await page.context().close();
    } finally {
      await stopDaemon(open);
    }
  }, 60_000);

  it('filters assets with the search box (server-side) and keeps hostile titles as text', async () => {
    const { page, problems } = await watchedPage(browser, { allowed: expected });
    await logIn(page, d);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Assets' }).click();
    await page.getByText('Assets 12').waitFor();
    await page.getByText(XSS_TITLE).waitFor();
    expect(await page.locator('main table img').count()).toBe(0);
    await page.getByLabel('Search').fill('api');
    await page.getByLabel('Search').press('Enter');
    await page.getByText('Assets 6').waitFor();
    const rows = await page.locator('main tbody tr').allTextContents();
    expect(rows).toHaveLength(6);
    for (const row of rows) expect(row).toContain('api');
    // The filter is in the address: a reload shows the same view.
    expect(page.url()).toContain('search=api');
    await page.reload();
    await page.getByText('Assets 6').waitFor();
    expect(await page.evaluate<number | undefined>('window.__xss')).toBeUndefined();
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);
});
