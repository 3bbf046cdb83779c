import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { callWith, tempDir } from './call.js';
import { openStore, type Store } from '../../../src/store/index.js';
import { FUNCTION_CATALOG } from '../../../src/engine/functions/catalog.js';

// The functions block this thread, so the webhook receiver runs in its own process and appends
// every request body to a file.
const RECEIVER = String.raw`
const http = require('node:http');
const fs = require('node:fs');
const out = process.argv[1];
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    fs.appendFileSync(out, JSON.stringify({ url: req.url, ct: req.headers['content-type'], body }) + '\n');
    res.statusCode = req.url === '/fail' ? 500 : 200;
    res.end(req.url.startsWith('/botGOOD') ? '{"ok":true}' : req.url.startsWith('/bot') ? '{"ok":false,"description":"Unauthorized"}' : 'ok');
  });
}).listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\n'));
`;

let receiver: ChildProcess;
let url = '';
let received = '';
const tmp = tempDir();
let store: Store;

beforeAll(async () => {
  received = path.join(tmp.dir, 'received.jsonl');
  receiver = spawn(process.execPath, ['-e', RECEIVER, received], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((ok) => receiver.stdout!.once('data', (d) => ok(String(d).trim())));
  url = `http://127.0.0.1:${port}`;
  store = openStore(':memory:');
});
afterAll(() => {
  receiver?.kill();
  store?.close();
  tmp.cleanup();
});

const bodies = () => (fs.existsSync(received) ? fs.readFileSync(received, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
// The receiver is on loopback: deliveries reach it only because the allowlist opens 127.0.0.1.
const LOOPBACK_ALLOWED = { outbound_allowlist: ['127.0.0.1'] };
const settings = (enabled: boolean, hooks: { url: string; enabled: boolean; events?: string[] }[], server: Record<string, unknown> = LOOPBACK_ALLOWED) => ({ notification: { enabled, webhooks: hooks }, server });

const tg = (over: Record<string, unknown> = {}, server: Record<string, unknown> = LOOPBACK_ALLOWED, log: (l: string) => void = () => {}) => ({
  settings: { server, notification: { telegram: { enabled: true, bot_token: 'GOOD:tok', chat_id: 42, telegram_channel_map: { alerts: -100123 }, api_url: url, ...over } } },
  log,
});

describe('event generation', () => {
  it('generate_event records an unprocessed event the daemon scheduler will pick up, and mirrors it to webhooks', () => {
    const ctx = { store, runUuid: 'run-1', workflowName: 'recon', workspace: 'ws', settings: settings(true, [{ url: `${url}/hook`, enabled: true }]), log: () => {} };
    expect(callWith(ctx, 'generate_event', 'example.com', 'assets.new', 'httpx', 'url', 'https://a.example.com')).toBe(true);
    const ev = store.events.list({ topic: 'assets.new' }, { offset: 0, limit: 10 }).data[0]!;
    expect(ev).toMatchObject({ topic: 'assets.new', source: 'httpx', source_type: 'run', data_type: 'url', workspace: 'example.com', run_id: 'run-1', workflow_name: 'recon', processed: false });
    expect(ev.data).toContain('https://a.example.com');
    const hook = bodies().find((b) => b.url === '/hook')!;
    expect(JSON.parse(hook.body)).toMatchObject({ topic: 'assets.new', source: 'httpx', data_type: 'url', data: 'https://a.example.com' });
    expect(callWith(ctx, 'generateEvent', 'ws', '', 'x', 'y', 'z')).toBe(false); // camelCase spelling; empty topic
  });

  it('generate_event_from_file records one event per non-blank line', () => {
    const f = tmp.file('urls.txt', 'https://a\n\n  https://b  \nhttps://c\n');
    const ctx = { store, workspace: 'ws', log: () => {} };
    expect(callWith(ctx, 'generate_event_from_file', 'ws', 'urls.found', 'katana', 'url', f)).toBe(3);
    const rows = store.events.list({ topic: 'urls.found' }, { offset: 0, limit: 10 }).data;
    expect(rows.map((r) => r.data).sort()).toEqual(['https://a', 'https://b', 'https://c']);
    expect(rows[0]!.source_type).toBe('eval');
    expect(callWith(ctx, 'generate_event_from_file', 'ws', 'urls.found', 'katana', 'url', '/nonexistent/file')).toBe(0);
  });
});

describe('webhook notifications', () => {
  it('notify_webhook sends the message payload to enabled hooks and reports delivery', () => {
    const ctx = { settings: { settings: settings(true, [{ url: `${url}/n1`, enabled: true }, { url: `${url}/off`, enabled: false }]) }, log: () => {} };
    expect(callWith(ctx, 'notify_webhook', 'scan done')).toBe(true);
    const got = bodies().filter((b) => b.url === '/n1');
    expect(got).toHaveLength(1);
    expect(got[0].ct).toBe('application/json');
    expect(JSON.parse(got[0].body)).toMatchObject({ event: 'message', data: { message: 'scan done' } });
    expect(bodies().some((b) => b.url === '/off')).toBe(false);
  });

  it('send_webhook_event honours the events filter; disabled notifications send nothing', () => {
    const ctx = { settings: settings(true, [{ url: `${url}/typed`, enabled: true }, { url: `${url}/filtered`, enabled: true, events: ['workflow_failed'] }]), log: () => {} };
    expect(callWith(ctx, 'send_webhook_event', 'custom', { count: 3 })).toBe(true);
    expect(JSON.parse(bodies().find((b) => b.url === '/typed')!.body)).toMatchObject({ event: 'custom', data: { count: 3 } });
    expect(bodies().some((b) => b.url === '/filtered')).toBe(false);
    expect(callWith({ settings: settings(false, [{ url: `${url}/typed`, enabled: true }]), log: () => {} }, 'notify_webhook', 'x')).toBe(false);
    expect(bodies().filter((b) => b.url === '/typed')).toHaveLength(1); // nothing sent while disabled
    expect(callWith({ settings: settings(true, [{ url: `${url}/fail`, enabled: true }]), log: () => {} }, 'notify_webhook', 'x')).toBe(false); // 500
  });

  it('are catalogued under their categories', () => {
    const names = FUNCTION_CATALOG.filter((e) => e.category === 'notification' || e.category === 'event_generation').map((e) => e.name).sort();
    expect(names).toEqual([
      'generate_event', 'generate_event_from_file', 'notify_message_as_file_telegram', 'notify_message_as_file_telegram_channel', 'notify_telegram', 'notify_telegram_channel', 'notify_webhook', 'send_telegram_file', 'send_telegram_file_channel', 'send_webhook_event',
    ]);
  });
});

describe('telegram notifications', () => {

  it('notify_telegram and notify_telegram_channel call sendMessage with the chat id', () => {
    expect(callWith(tg(), 'notify_telegram', 'hello from osm')).toBe(true);
    const msg = bodies().filter((b) => b.url === '/botGOOD:tok/sendMessage');
    expect(JSON.parse(msg[0].body)).toEqual({ chat_id: '42', text: 'hello from osm' });
    expect(callWith(tg(), 'notify_telegram_channel', 'alerts', 'to the channel')).toBe(true);
    expect(JSON.parse(bodies().filter((b) => b.url === '/botGOOD:tok/sendMessage')[1].body)).toEqual({ chat_id: '-100123', text: 'to the channel' });
    expect(callWith(tg(), 'notify_telegram_channel', 'nope', 'x')).toBe(false); // unknown channel
    expect(callWith(tg({ enabled: false }), 'notify_telegram', 'x')).toBe(false);
    expect(callWith(tg({ bot_token: 'BAD' }), 'notify_telegram', 'x')).toBe(false); // Telegram said ok: false
  });

  it('send_telegram_file uploads the file as a document with its caption', () => {
    const f = tmp.file('report.md', '# findings\n3 high\n');
    expect(callWith(tg(), 'send_telegram_file', f, 'the report')).toBe(true);
    const doc = bodies().find((b) => b.url === '/botGOOD:tok/sendDocument')!;
    expect(doc.ct).toMatch(/^multipart\/form-data; boundary=/);
    expect(doc.body).toContain('name="document"; filename="report.md"');
    expect(doc.body).toContain('# findings');
    expect(doc.body).toContain('the report');
    expect(callWith(tg(), 'send_telegram_file', '/nonexistent/file.txt')).toBe(false);
  });
});

describe('notify_message_as_file_telegram', () => {
  it('uploads the file content as a text document (multipart sendDocument) to the chat or a mapped channel', () => {
    const f = tmp.file('summary.md', '# summary\n12 hosts, 3 findings\n');
    const before = bodies().filter((b) => b.url === '/botGOOD:tok/sendDocument').length;
    expect(callWith(tg(), 'notify_message_as_file_telegram', f)).toBe(true);
    expect(callWith(tg(), 'notifyMessageAsFileTelegramChannel', 'alerts', f)).toBe(true);
    const docs = bodies().filter((b) => b.url === '/botGOOD:tok/sendDocument').slice(before);
    expect(docs).toHaveLength(2);
    for (const [doc, chat] of [[docs[0], '42'], [docs[1], '-100123']] as const) {
      expect(doc.ct).toMatch(/^multipart\/form-data; boundary=/);
      expect(doc.body).toMatch(new RegExp(`name="chat_id"\\r\\n\\r\\n${chat}\\r\\n`));
      expect(doc.body).toContain('name="document"; filename="summary.md.txt"');
      expect(doc.body).toContain('12 hosts, 3 findings');
    }
    // a .txt keeps its name; a missing file, an unknown channel or telegram off send nothing
    const t = tmp.file('notes.txt', 'plain');
    expect(callWith(tg(), 'notify_message_as_file_telegram', t)).toBe(true);
    expect(bodies().at(-1)!.body).toContain('filename="notes.txt"');
    const n = bodies().length;
    expect(callWith(tg(), 'notify_message_as_file_telegram', '/nonexistent/summary.md')).toBe(false);
    expect(callWith(tg(), 'notify_message_as_file_telegram_channel', 'nope', f)).toBe(false);
    expect(callWith(tg({ enabled: false }), 'notify_message_as_file_telegram', f)).toBe(false);
    expect(callWith(tg({}, { outbound_allowlist: [] }), 'notify_message_as_file_telegram', f)).toBe(false);
    expect(bodies()).toHaveLength(n);
  });
});

describe('notification targets follow the outbound policy (they come from settings API clients can write)', () => {
  it('a loopback webhook is refused unless server.outbound_allowlist lists it: nothing is sent, the warning names host and setting', () => {
    const lines: string[] = [];
    const before = bodies().length;
    for (const target of [`${url}/ssrf`, url.replace('127.0.0.1', 'localhost') + '/ssrf', url.replace('127.0.0.1', '[::ffff:127.0.0.1]') + '/ssrf', url.replace('127.0.0.1', '2130706433') + '/ssrf']) {
      const ctx = { store, settings: settings(true, [{ url: target, enabled: true }], { outbound_allowlist: [] }), log: (l: string) => lines.push(l) };
      expect(callWith(ctx, 'notify_webhook', 'x'), target).toBe(false);
      expect(callWith(ctx, 'generate_event', 'ws', 'topic.refused', 's', 't', 'd'), target).toBe(true); // recorded, not mirrored
    }
    expect(bodies()).toHaveLength(before);
    expect(lines.filter((l) => /webhook delivery refused: .* is a loopback (address|name); add it to server\.outbound_allowlist to allow it/.test(l))).toHaveLength(8);
    // Allowlisting another address does not open this one.
    const other = { settings: settings(true, [{ url: `${url}/ssrf`, enabled: true }], { outbound_allowlist: ['10.0.0.1', 'example.com'] }), log: () => {} };
    expect(callWith(other, 'notify_webhook', 'x')).toBe(false);
    expect(bodies()).toHaveLength(before);
  });

  it('telegram messages and files to a loopback api_url are refused unless allowlisted', () => {
    const lines: string[] = [];
    const before = bodies().length;
    const f = tmp.file('refused.md', 'x');
    expect(callWith(tg({}, { outbound_allowlist: [] }, (l) => lines.push(l)), 'notify_telegram', 'hi')).toBe(false);
    expect(callWith(tg({}, { outbound_allowlist: [] }, (l) => lines.push(l)), 'send_telegram_file', f, 'c')).toBe(false);
    expect(bodies()).toHaveLength(before);
    expect(lines.join('\n')).toMatch(/telegram: 127\.0\.0\.1 is a loopback address; add it to server\.outbound_allowlist/);
    expect(lines.join('\n')).not.toContain('GOOD:tok'); // the URL holds the token: never shown
  });
});
