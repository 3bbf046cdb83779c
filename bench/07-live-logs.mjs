/**
 * Benchmark 7 — live logs.
 *
 * (a) Log latency: a step prints its own clock (`date +%s%3N`) every 20 ms; an SSE client on
 *     GET /osm/api/runs/{id}/logs records, for each line, receive time − the time in the line.
 *     Baseline: the same shell loop spawned directly by this process, read from its pipe — the
 *     latency of a plain pipe, which osm's path (spawner → engine → log file and journal → SSE)
 *     adds to.
 * (b) Followers: a foreach over 10,000 items (parallel 16, each printing a line) with 20 SSE
 *     clients following the run's log, while /health is probed; baseline: the same foreach with
 *     no follower. Both on a fresh daemon.
 * (c) The same two in real browsers (Debian's Chromium through playwright-core, when installed):
 *     the latency from the step writing a line to the dashboard's run page showing it (timed in
 *     the page by a MutationObserver against the clock printed in the line), and 20 Chromium pages
 *     following the run page of the 10k-item foreach while /health is probed.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { quantile, round, scaled, sleep, tempDir, writeHostLines } from './lib/common.mjs';
import { configSet, startDaemon, waitJob } from './lib/daemon.mjs';
import { startProbe } from './lib/probe.mjs';
import { findChromium, launchChromium } from '../web/tools/chromium.mjs';
import { readFileSync } from 'node:fs';
import YAML from 'yaml';

export const meta = { id: 7, name: 'live-logs', title: 'Live logs: line latency to an SSE client; 20 followers during a 10,000-item foreach' };

const TICKS = 200;
const TICK_LOOP = `for i in $(seq 1 ${TICKS}); do date +%s%3N; sleep 0.02; done`;

const TICKER = `kind: module
name: bench-ticker
steps:
  - name: tick
    type: bash
    command: '${TICK_LOOP}'
`;

// The same ticker after a pause, so a browser page is open and watching before the first line.
const TICKER_LATE = `kind: module
name: bench-ticker-late
steps:
  - name: wait
    type: bash
    command: sleep 4
  - name: tick
    type: bash
    command: '${TICK_LOOP}'
`;

const FANOUT = `kind: module
name: bench-fan-echo
params:
  - name: input_file
  - name: gate
    default: ''
steps:
  - name: wait
    type: bash
    command: 'if [ -n "{{gate}}" ]; then while [ ! -e "{{gate}}" ]; do sleep 0.05; done; fi'
  - name: fan
    type: foreach
    input: "{{input_file}}"
    variable: line
    parallel: 16
    step:
      name: item
      type: bash
      command: echo [[line]]
`;

const writeLines = (file, n) => writeHostLines(file, n, 'follow.example.com');

/** Reads an SSE response until its `end` event; calls onLine(data, receivedAtMs) for each line event. */
async function follow(url, headers, onLine, signal) {
  const res = await request(url, { headers: { ...headers, accept: 'text/event-stream' }, signal });
  if (res.statusCode !== 200) throw new Error(`log stream answered ${res.statusCode}`);
  let buf = '';
  let lines = 0;
  for await (const chunk of res.body) {
    buf += chunk.toString('utf8');
    for (let end = buf.indexOf('\n\n'); end !== -1; end = buf.indexOf('\n\n')) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      if (block.includes('event: end')) return lines;
      if (!block.includes('event: line')) continue;
      lines++;
      const data = block.split('\n').find((l) => l.startsWith('data: '));
      if (data && onLine) onLine(JSON.parse(data.slice(6)), Date.now());
    }
  }
  return lines;
}

function stats(values) {
  return { n: values.length, p50_ms: round(quantile(values, 0.5), 1), p95_ms: round(quantile(values, 0.95), 1), max_ms: round(Math.max(...values), 1) };
}

/** The same loop read from a pipe by this process. */
function pipeLatencies() {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/bash', ['-c', TICK_LOOP], { stdio: ['ignore', 'pipe', 'inherit'] });
    const out = [];
    let buf = '';
    child.stdout.on('data', (c) => {
      const at = Date.now();
      buf += c.toString('utf8');
      const parts = buf.split('\n');
      buf = parts.pop();
      for (const p of parts) if (/^\d+$/.test(p)) out.push(at - Number(p));
    });
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

/** One foreach run on the daemon, with `followers` SSE clients; /health probed meanwhile. */
async function fanRun(daemon, input, followers) {
  const probe = startProbe(`${daemon.url}/health`);
  const sub = await daemon.api('POST', '/osm/api/runs', { module: 'bench-fan-echo', target: 'follow.example.com', params: { input_file: input } });
  const uuid = sub.run_uuid;
  const streams = Array.from({ length: followers }, () => follow(`${daemon.url}/osm/api/runs/${uuid}/logs`, { 'x-osm-api-key': daemon.key }));
  const job = await waitJob(daemon, sub.job_id, 50);
  const got = await Promise.all(streams);
  const health = await probe.stop();
  if (job.completed !== 1) throw new Error(`foreach run did not complete: ${JSON.stringify(job).slice(0, 300)}`);
  return { health, linesPerFollower: got };
}

/** A logged-in browser storage state (cookie), made once through the login form. */
async function browserLogin(browser, url, base) {
  const settings = YAML.parse(readFileSync(path.join(base, 'osm-settings.yaml'), 'utf8'));
  const [username, password] = Object.entries(settings.server.simple_user_map_key)[0];
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(url);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  const state = await context.storageState();
  await context.close();
  return state;
}

/** Opens the run's page in a fresh context; resolves once its log view is on screen. */
async function openRunPage(browser, state, url, uuid) {
  const context = await browser.newContext({ storageState: state, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${url}/runs/${uuid}`);
  await page.locator('.log-view, .log').first().waitFor({ timeout: 60_000 });
  return { context, page };
}

/** Installs an observer in the page recording, for each new log row holding a clock, now − that clock. */
function watchLatency(page) {
  return page.evaluate(() => {
    const since = Date.now();
    window.__lat = [];
    new MutationObserver((records) => {
      const at = Date.now();
      for (const r of records)
        for (const n of r.addedNodes) {
          if (!(n instanceof HTMLElement) || !n.classList.contains('log-line')) continue;
          const text = n.lastChild?.textContent ?? '';
          if (/^\d+$/.test(text) && Number(text) >= since) window.__lat.push(at - Number(text));
        }
    }).observe(document.body, { subtree: true, childList: true });
  });
}

/** Lines of the fan-out shown in a page. */
const fanLinesShown = (page) => page.evaluate(() => [...document.querySelectorAll('.log-line')].filter((n) => /follow\.example\.com$/.test(n.lastChild?.textContent ?? '')).length);

/** (c) Real browsers: line latency to the run page, then 20 pages following a 10k-item foreach. */
async function browserPart(daemon, base, input, items, log) {
  const chrome = await launchChromium();
  try {
    const state = await browserLogin(chrome.browser, daemon.url, base);
    const sub = await daemon.api('POST', '/osm/api/runs', { module: 'bench-ticker-late', target: 'tick.example.com' });
    const one = await openRunPage(chrome.browser, state, daemon.url, sub.run_uuid);
    await watchLatency(one.page);
    await waitJob(daemon, sub.job_id, 100);
    await sleep(1000);
    const lat = await one.page.evaluate(() => window.__lat);
    await one.context.close();
    if (lat.length < TICKS / 2) throw new Error(`the run page showed only ${lat.length} of ${TICKS} clock lines live`);
    const latency = stats(lat);
    log(`  browser latency: p50 ${latency.p50_ms} ms, p95 ${latency.p95_ms} ms (${latency.n} lines)`);

    // 20 pages open on the run page while its first step waits at a gate; the probe covers the fan-out only.
    const gated = async (pageCount) => {
      const gate = path.join(path.dirname(input), `gate-${pageCount}`);
      const fan = await daemon.api('POST', '/osm/api/runs', { module: 'bench-fan-echo', target: 'follow.example.com', params: { input_file: input, gate } });
      const t0 = Date.now();
      const opened = [];
      for (let i = 0; i < pageCount; i += 5) opened.push(...(await Promise.all(Array.from({ length: Math.min(5, pageCount - i) }, () => openRunPage(chrome.browser, state, daemon.url, fan.run_uuid)))));
      const openedMs = Date.now() - t0;
      const probe = startProbe(`${daemon.url}/health`);
      writeFileSync(gate, '');
      const job = await waitJob(daemon, fan.job_id, 50);
      const health = await probe.stop();
      if (job.completed !== 1) throw new Error(`foreach run did not complete: ${JSON.stringify(job).slice(0, 300)}`);
      return { pages: opened, health, openedMs };
    };
    const alone = await gated(0);
    const { pages, health, openedMs } = await gated(20);
    let shown = [];
    for (let tries = 0; tries < 60; tries++) {
      shown = await Promise.all(pages.map((p) => fanLinesShown(p.page)));
      if (shown.every((n) => n === items)) break;
      await sleep(500);
    }
    for (const p of pages) await p.context.close();
    log(`  /health p99 ${health.p99_ms} ms with 20 browser pages following (pages opened in ${openedMs} ms); lines shown per page: ${[...new Set(shown)].join(', ')}`);
    return { latency, health, alone: alone.health, shown, openedMs };
  } finally {
    await chrome.close();
  }
}

/** Runs the benchmark; returns table rows and details for the JSON result. */
export async function run({ log }) {
  const items = scaled(10_000, 200);
  const { dir, cleanup } = tempDir();
  let daemon;
  try {
    const base = path.join(dir, 'base');
    const wf = path.join(dir, 'workflows');
    mkdirSync(path.join(wf, 'modules'), { recursive: true });
    writeFileSync(path.join(wf, 'modules', 'bench-ticker.yaml'), TICKER);
    writeFileSync(path.join(wf, 'modules', 'bench-ticker-late.yaml'), TICKER_LATE);
    writeFileSync(path.join(wf, 'modules', 'bench-fan-echo.yaml'), FANOUT);
    const input = path.join(dir, 'lines.txt');
    await writeLines(input, items);
    await configSet(base, { 'server.max_concurrent_runs': 2 });

    // (a) latency
    const pipe = stats(await pipeLatencies());
    log(`  pipe latency: p50 ${pipe.p50_ms} ms, p95 ${pipe.p95_ms} ms`);
    daemon = await startDaemon(base, wf);
    const sub = await daemon.api('POST', '/osm/api/runs', { module: 'bench-ticker', target: 'tick.example.com' });
    const latencies = [];
    await follow(`${daemon.url}/osm/api/runs/${sub.run_uuid}/logs`, { 'x-osm-api-key': daemon.key }, (d, at) => {
      if (/^\d+$/.test(d.line)) latencies.push(at - Number(d.line));
    });
    const sse = stats(latencies);
    log(`  SSE latency:  p50 ${sse.p50_ms} ms, p95 ${sse.p95_ms} ms (${sse.n} lines)`);

    // (b) followers during a fan-out, against the same fan-out alone
    const alone = await fanRun(daemon, input, 0);
    await sleep(500);
    const followed = await fanRun(daemon, input, 20);
    const complete = followed.linesPerFollower.every((n) => n === items);
    log(`  /health p99: ${followed.health.p99_ms} ms with 20 followers, ${alone.health.p99_ms} ms without; every follower got ${complete ? 'every' : 'NOT every'} line`);

    // (c) the same in real browsers, when Chromium is installed
    const browser = findChromium() ? await browserPart(daemon, base, input, items, log) : null;
    if (!browser) log('  no Chromium: the browser rows are skipped (apt-get install -y chromium)');
    const browserRows = browser
      ? [
          {
            metric: 'log line latency to the dashboard run page in Chromium (p95)',
            figure: browser.latency.p95_ms,
            unit: 'ms',
            baseline: pipe.p95_ms,
            baselineLabel: 'ms, the same loop read from a pipe',
            ratio: pipe.p95_ms > 0 ? round(browser.latency.p95_ms / pipe.p95_ms, 1) : null,
            target: 'p95 < 300 ms',
            met: browser.latency.p95_ms < 300,
          },
          {
            metric: '/health p99, 20 Chromium pages following a 10k-item foreach',
            figure: browser.health.p99_ms,
            unit: 'ms',
            baseline: browser.alone.p99_ms,
            baselineLabel: 'ms, same foreach, no page open',
            ratio: round(browser.health.p99_ms / browser.alone.p99_ms, 1),
            target: 'p99 < 50 ms, every line shown',
            met: browser.health.p99_ms < 50 && browser.health.failures === 0 && browser.shown.every((n) => n === items),
          },
        ]
      : [];
    return {
      rows: [
        {
          metric: 'log line latency to an SSE client (p95)',
          figure: sse.p95_ms,
          unit: 'ms',
          baseline: pipe.p95_ms,
          baselineLabel: 'ms, the same loop read from a pipe',
          ratio: pipe.p95_ms > 0 ? round(sse.p95_ms / pipe.p95_ms, 1) : null,
          target: 'p95 < 300 ms',
          met: sse.p95_ms < 300,
        },
        {
          metric: '/health p99, 20 SSE followers of a 10k-item foreach',
          figure: followed.health.p99_ms,
          unit: 'ms',
          baseline: alone.health.p99_ms,
          baselineLabel: 'ms, same foreach, no follower',
          ratio: round(followed.health.p99_ms / alone.health.p99_ms, 1),
          target: 'p99 < 50 ms, every line delivered',
          met: followed.health.p99_ms < 50 && followed.health.failures === 0 && complete,
        },
        ...browserRows,
      ],
      details: {
        ticks: TICKS,
        sse_latency: sse,
        pipe_latency: pipe,
        foreach_items: items,
        followers: 20,
        lines_per_follower: followed.linesPerFollower,
        health_with_followers: followed.health,
        health_without_followers: alone.health,
        browser: browser && { latency: browser.latency, health: browser.health, health_without_pages: browser.alone, lines_shown_per_page: browser.shown, pages_opened_ms: browser.openedMs },
      },
    };
  } finally {
    await daemon?.stop();
    cleanup();
  }
}
