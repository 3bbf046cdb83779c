import type { Command } from 'commander';
import { optionsOf } from '../context.js';
import { errors } from '../../errors.js';
import { openApp } from '../app.js';
import { openRunLogs, type RunLogItem } from '../../services/run-logs.js';
import { remoteTarget } from '../api-client.js';
import { followSse, type SseMessage } from '../sse-client.js';
import { request } from 'undici';

interface LogsFlags {
  step?: string;
  follow?: boolean;
  tail?: string;
  server?: string;
  apiKey?: string;
}

function tailOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw.trim())) throw errors.validation(`--tail must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return Number(raw.trim());
}

/**
 * Prints items: a line as it was written (prefixed `[step] ` when several steps are shown; a
 * parallel-steps child's line `[step/child] `, or `[child] ` with --step, as the terminal shows
 * it), or with --json one JSON object per line (`{"id","event":"line"|"step"|"end",…}`).
 */
function printer(json: boolean, oneStep: boolean): (item: RunLogItem) => void {
  return (item) => {
    if (json) {
      const { type, ...rest } = item;
      process.stdout.write(`${JSON.stringify(item.type === 'end' ? { event: type, ...rest } : { id: item.id, event: type, ...rest })}\n`);
    } else if (item.type === 'line') {
      const who = oneStep ? item.substep : item.substep ? `${item.step}/${item.substep}` : item.step;
      process.stdout.write(`${who ? `[${who}] ` : ''}${item.line}\n`);
    }
  };
}

/** `osm logs <run> [--step S] [-f] [--tail N] [--server URL]`. */
export async function logsAction(command: Command, run: string): Promise<void> {
  const o = optionsOf<LogsFlags>(command);
  const tail = tailOf(o.tail);
  const print = printer(Boolean(o.json), o.step !== undefined);
  const remote = remoteTarget(o);
  if (remote) return remoteLogs(remote.server, remote.apiKey, run, { step: o.step, tail, follow: Boolean(o.follow) }, print);

  const app = await openApp(o);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const session = await openRunLogs(app, undefined, run, { step: o.step, tail, follow: Boolean(o.follow) });
    for await (const item of session.items(stop.signal)) print(item);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await app.close();
  }
}

/** The same from a daemon: its log stream (SSE) with -f, else its JSON lines. */
async function remoteLogs(server: string, apiKey: string | undefined, run: string, q: { step?: string; tail?: number; follow: boolean }, print: (item: RunLogItem) => void): Promise<void> {
  const params = new URLSearchParams();
  if (q.step !== undefined) params.set('step', q.step);
  if (q.tail !== undefined) params.set('tail', String(q.tail));
  const path = `osm/api/runs/${encodeURIComponent(run)}/logs`;
  if (q.follow) {
    const query = params.toString();
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.on('SIGINT', onSignal);
    try {
      for await (const msg of followSse(server, `${path}${query ? `?${query}` : ''}`, apiKey, { signal: stop.signal })) {
        const item = itemOf(msg);
        if (item) print(item);
      }
    } catch (err) {
      if (!stop.signal.aborted) throw err;
    } finally {
      process.off('SIGINT', onSignal);
    }
    return;
  }
  params.set('format', 'jsonl');
  const root = server.endsWith('/') ? server : `${server}/`;
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(new URL(`${path}?${params.toString()}`, root), { headers: apiKey ? { 'x-osm-api-key': apiKey } : {} });
  } catch (err) {
    throw errors.unavailable(`cannot reach ${server}: ${(err as Error).message}`);
  }
  if (res.statusCode >= 400) {
    const text = await res.body.text();
    let message = text.slice(0, 300);
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? message;
    } catch {
      /* not JSON */
    }
    throw new Error(`server ${res.statusCode}: ${message}`);
  }
  let buf = '';
  const decoder = new TextDecoder();
  const flush = (line: string) => {
    if (!line.trim()) return;
    const j = JSON.parse(line) as { id?: number; event: string } & Record<string, unknown>;
    const item = itemOf({ id: j.id !== undefined ? String(j.id) : undefined, event: j.event, data: JSON.stringify(j) });
    if (item) print(item);
  };
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk as Buffer, { stream: true });
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines) flush(l);
  }
  flush(buf);
}

/** A stream message as a log item (undefined for anything else). */
function itemOf(msg: SseMessage): RunLogItem | undefined {
  let d: Record<string, unknown>;
  try {
    d = JSON.parse(msg.data) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const id = Number(msg.id ?? d.id ?? 0);
  const ts = String(d.ts ?? '');
  const substep = typeof d.substep === 'string' && d.substep ? { substep: d.substep } : {};
  if (msg.event === 'line') return { type: 'line', id, step: String(d.step ?? ''), ...substep, stream: d.stream === 'stderr' ? 'stderr' : 'stdout', line: String(d.line ?? ''), ts };
  if (msg.event === 'step') return { type: 'step', id, step: String(d.step ?? ''), status: String(d.status ?? ''), exit_code: typeof d.exit_code === 'number' ? d.exit_code : null, duration_ms: typeof d.duration_ms === 'number' ? d.duration_ms : 0, ts };
  if (msg.event === 'end') return { type: 'end', status: (['completed', 'failed', 'cancelled'].includes(String(d.status)) ? d.status : 'failed') as 'completed' | 'failed' | 'cancelled' };
  return undefined;
}

