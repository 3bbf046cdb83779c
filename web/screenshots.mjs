#!/usr/bin/env node
/**
 * Screenshots of every dashboard page for docs/dashboard.md (`npm run screenshots`): the built
 * daemon on a temporary base folder with sample data, Debian's Chromium, 1280 px wide (plus a
 * phone width and the dark theme for a few pages). Run `npm run build` first.
 */
import fs from 'node:fs';
import path from 'node:path';
import { launchChromium } from './tools/chromium.mjs';
import { ROOT, seed, startDaemon } from './tools/daemon.mjs';

const OUT = path.join(ROOT, 'docs', 'dashboard');
fs.mkdirSync(OUT, { recursive: true });
if (!fs.existsSync(path.join(ROOT, 'dist', 'web', 'index.html'))) throw new Error('dist/web is missing: run npm run build first');

const d = await startDaemon();
const { browser, close } = await launchChromium();
const shots = [];
try {
  const { runs } = await seed(d);
  const [one] = (await d.api('GET', '/osm/api/vulnerabilities?limit=1')).data;
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' });
  const page = await context.newPage();
  const shot = async (name, url, ready, opts = {}) => {
    if (url) await page.goto(`${d.url}${url}`);
    if (ready) await page.locator(ready).first().waitFor();
    // A signed-in page keeps the live event stream open: wait for the page, then a moment for its data.
    await page.waitForLoadState('load');
    await page.waitForTimeout(500);
    const file = path.join(OUT, `${name}.png`);
    await page.screenshot({ path: file, fullPage: opts.full ?? false });
    shots.push(name);
  };

  await page.goto(d.url);
  await page.getByLabel('Username').waitFor();
  await shot('login');
  await page.getByLabel('Username').fill(d.user);
  await page.getByLabel('Password').fill(d.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();

  await shot('overview', '/overview', 'figure.chart');
  await shot('runs', '/runs', 'table');
  await shot('run-new', '/runs/new?workflow=sample-recon', 'text=Parameters');
  await shot('run-detail', `/runs/${runs[0]}`, '.log-line', { full: true });
  await shot('workflows', '/workflows', 'table');
  await shot('workflow-detail', '/workflows/sample-flow', '.graph svg', { full: true });
  await shot('workspaces', '/workspaces', 'table');
  await shot('workspace-detail', '/workspaces/example.com', 'table');
  await shot('workspace-changes', '/workspaces/example.com?tab=changes', '.diffs, .state');
  await shot('assets', '/assets', 'table');
  await shot('vulnerabilities', '/vulnerabilities', 'table');
  await shot('vulnerability-detail', `/vulnerabilities/${one.id}`, 'pre');
  await shot('schedules', '/schedules', 'table');
  await shot('events', '/events', 'table');
  await shot('workers', '/workers', '.state');
  await shot('settings', '/settings', 'textarea');

  await page.emulateMedia({ colorScheme: 'dark' });
  await shot('overview-dark', '/overview', 'figure.chart');
  await shot('run-detail-dark', `/runs/${runs[0]}`, '.log-line');

  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  const p2 = await phone.newPage();
  await p2.goto(d.url);
  await p2.getByLabel('Username').fill(d.user);
  await p2.getByLabel('Password').fill(d.password);
  await p2.getByRole('button', { name: 'Log in' }).click();
  await p2.getByRole('heading', { name: 'Overview' }).waitFor();
  await p2.goto(`${d.url}/runs/${runs[0]}`);
  await p2.locator('.log-line').first().waitFor();
  await p2.screenshot({ path: path.join(OUT, 'phone-run-detail.png') });
  await p2.goto(`${d.url}/assets`);
  await p2.locator('table').waitFor();
  await p2.screenshot({ path: path.join(OUT, 'phone-assets.png') });
  shots.push('phone-run-detail', 'phone-assets');
} finally {
  await close();
  await d.stop();
}
console.log(`${shots.length} screenshots in ${path.relative(process.cwd(), OUT) || OUT}: ${shots.join(', ')}`);
