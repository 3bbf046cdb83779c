/**
 * Debian's Chromium driven by playwright-core, for the screenshots script and the benchmarks
 * (the browser tests have the same launcher in test/helpers/browser.ts). Headless, no sandbox
 * (CI runs as root), nothing that phones home, a fresh temporary profile every time.
 */
import fs from 'node:fs';

/** The Chromium binary: $OSM_CHROMIUM, else the usual Debian/Ubuntu paths; undefined when none. */
export function findChromium() {
  const candidates = [process.env.OSM_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium', '/usr/bin/google-chrome'];
  return candidates.find((p) => p && fs.existsSync(p));
}

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'];

/** Launches the browser (playwright gives it a fresh temporary profile, removed on close); returns { browser, close }. */
export async function launchChromium() {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('No Chromium found: apt-get install -y chromium (or set OSM_CHROMIUM)');
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
  return { browser, close: () => browser.close().catch(() => {}) };
}
