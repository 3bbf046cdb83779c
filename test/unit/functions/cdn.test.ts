/**
 * The cdn_storage functions against a real S3-protocol server (s3rver on loopback behind a
 * SigV4-verifying front; see test/helpers/s3.ts). Each test file has its own server, bucket,
 * key pair and temporary folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getFunction } from '../../../src/engine/functions/registry.js';
import { FUNCTION_CATALOG } from '../../../src/engine/functions/catalog.js';
import type { FnContext } from '../../../src/engine/js-runtime.js';
import { evaluate } from '../../../src/engine/js-runtime.js';
import { startS3, type S3Fixture } from '../../helpers/s3.js';
import { tempDir } from '../../helpers/tmp.js';

const s3 = await startS3();
const CDN = FUNCTION_CATALOG.filter((e) => e.category === 'cdn_storage').map((e) => e.name);

describe.skipIf(!s3)('cdn_* functions against s3rver', () => {
  const fx = s3 as S3Fixture;
  const { dir, cleanup } = tempDir('osm-cdn-');
  const logs: string[] = [];
  const ctx: FnContext = { settings: { storage: fx.storage }, log: (l) => logs.push(l), cwd: dir };
  const fn = (name: string, ...args: unknown[]) => getFunction(name)!(ctx, ...args);
  let raw: S3Client;

  beforeAll(() => {
    raw = new S3Client({ endpoint: fx.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: fx.accessKeyId, secretAccessKey: fx.secretAccessKey } });
  });
  afterAll(async () => {
    raw.destroy();
    await fx.close();
    cleanup();
  });

  it('catalogues the eleven reference functions under cdn_storage', () => {
    expect(CDN.sort()).toEqual(['cdn_delete', 'cdn_download', 'cdn_exists', 'cdn_get_presigned_url', 'cdn_list', 'cdn_ls_tree', 'cdn_read', 'cdn_stat', 'cdn_sync_download', 'cdn_sync_upload', 'cdn_upload']);
    for (const name of CDN) expect(getFunction(name), name).toBeTypeOf('function');
  });

  it('cdn_upload, cdn_exists, cdn_stat, cdn_read, cdn_download round-trip a file', () => {
    writeFileSync(join(dir, 'report.txt'), 'hello storage\n');
    expect(fn('cdn_upload', join(dir, 'report.txt'), 'scans/t1/report.txt')).toBe(true);
    expect(fn('cdn_exists', 'scans/t1/report.txt')).toBe(true);
    expect(fn('cdn_exists', 'scans/t1/nope.txt')).toBe(false);
    const st = fn('cdn_stat', 'scans/t1/report.txt') as { key: string; size: number; lastModified: string; etag: string };
    expect(st).toMatchObject({ key: 'scans/t1/report.txt', size: 14 });
    expect(Date.parse(st.lastModified)).toBeGreaterThan(0);
    expect(st.etag).toMatch(/^[0-9a-f]{32}$/);
    expect(fn('cdn_stat', 'scans/t1/nope.txt')).toBeNull();
    expect(fn('cdn_read', 'scans/t1/report.txt')).toBe('hello storage\n');
    // relative local paths are relative to the evaluation's working folder
    expect(fn('cdn_download', 'scans/t1/report.txt', 'out/deep/copy.txt')).toBe(true);
    expect(readFileSync(join(dir, 'out/deep/copy.txt'), 'utf8')).toBe('hello storage\n');
    expect(fn('cdn_download', 'scans/t1/missing.txt', join(dir, 'missing.txt'))).toBe(false);
    expect(existsSync(join(dir, 'missing.txt'))).toBe(false);
    expect(logs.some((l) => l.startsWith('[WARN] cdn_download: not found in storage: scans/t1/missing.txt'))).toBe(true);
  });

  it('cdn_upload sends a file larger than one part as a multipart upload', () => {
    const big = Buffer.alloc(9 * 1024 * 1024 + 123, 0x61);
    writeFileSync(join(dir, 'big.bin'), big);
    expect(fn('cdn_upload', join(dir, 'big.bin'), 'big/big.bin')).toBe(true);
    expect((fn('cdn_stat', 'big/big.bin') as { size: number }).size).toBe(big.length);
    expect(fn('cdn_download', 'big/big.bin', join(dir, 'big-back.bin'))).toBe(true);
    expect(readFileSync(join(dir, 'big-back.bin')).equals(big)).toBe(true);
  });

  it('cdn_list and cdn_ls_tree show what is under a prefix', () => {
    writeFileSync(join(dir, 'a.txt'), 'a');
    expect(fn('cdn_upload', join(dir, 'a.txt'), 'tree/x/a.txt')).toBe(true);
    expect(fn('cdn_upload', join(dir, 'a.txt'), 'tree/x/y/b.txt')).toBe(true);
    expect(fn('cdn_upload', join(dir, 'a.txt'), 'tree/c.txt')).toBe(true);
    const list = fn('cdn_list', 'tree/') as { key: string; size: number }[];
    expect(list.map((o) => o.key)).toEqual(['tree/c.txt', 'tree/x/a.txt', 'tree/x/y/b.txt']);
    expect(list[0]).toMatchObject({ size: 1, lastModified: expect.any(String), etag: expect.any(String) });
    const tree = fn('cdn_ls_tree', 'tree') as string;
    expect(tree.split('\n').slice(0, 6)).toEqual(['tree/', '├── c.txt (1 B)', '└── x/', '    ├── a.txt (1 B)', '    └── y/', '        └── b.txt (1 B)']);
    const shallow = fn('cdn_ls_tree', 'tree/', 1) as string;
    expect(shallow).toContain('└── x/ … 2 file(s)');
    expect(shallow).not.toContain('b.txt');
    // the whole bucket
    expect((fn('cdn_list') as unknown[]).length).toBeGreaterThanOrEqual(3);
  });

  it('cdn_get_presigned_url gives a URL that downloads the object without credentials', async () => {
    writeFileSync(join(dir, 'p.txt'), 'presigned body');
    expect(fn('cdn_upload', join(dir, 'p.txt'), 'share/p.txt')).toBe(true);
    const url = fn('cdn_get_presigned_url', 'share/p.txt', 5) as string;
    expect(url).toContain(`/${fx.bucket}/share/p.txt?`);
    expect(url).toContain('X-Amz-Expires=300');
    expect(url).toContain('X-Amz-Signature=');
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('presigned body');
    // default lifetime: storage.presign_expiry (1h)
    expect(fn('cdn_get_presigned_url', 'share/p.txt') as string).toContain('X-Amz-Expires=3600');
    // the server checks the signature: another key, a tampered signature or path is refused
    const tampered = url.replace(/X-Amz-Signature=([0-9a-f])/, (_m, c: string) => `X-Amz-Signature=${c === '0' ? '1' : '0'}`);
    expect((await fetch(tampered)).status).toBe(403);
    expect((await fetch(url.replace('/share/p.txt?', '/share/q.txt?'))).status).toBe(403);
  });

  it('cdn_get_presigned_url URLs stop working once expired', async () => {
    const url = fn('cdn_get_presigned_url', 'share/p.txt', 1 / 60) as string;
    expect(url).toContain('X-Amz-Expires=1');
    await new Promise((r) => setTimeout(r, 2100));
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('Request has expired');
  });

  it('signs with the configured secret: another secret is refused by the server', () => {
    logs.length = 0;
    const wrong: FnContext = { settings: { storage: { ...fx.storage, secret_access_key: 'not-the-secret-0000' } }, log: (l) => logs.push(l) };
    expect(getFunction('cdn_exists')!(wrong, 'share/p.txt')).toBe(false);
    expect(getFunction('cdn_read')!(wrong, 'share/p.txt')).toBe('');
    expect(logs.join('\n')).toContain('SignatureDoesNotMatch');
    expect(logs.join('\n')).not.toContain('not-the-secret-0000');
  });

  it('cdn_sync_upload uploads a folder and skips unchanged files the second time', () => {
    const src = join(dir, 'sync-src');
    mkdirSync(join(src, 'sub'), { recursive: true });
    writeFileSync(join(src, 'one.txt'), '1');
    writeFileSync(join(src, 'sub/two.txt'), '22');
    symlinkSync('/etc/passwd', join(src, 'link'));
    expect(fn('cdn_sync_upload', src, 'synced')).toEqual({ success: true, uploaded: 2, skipped: 0, errors: 0 });
    expect(fn('cdn_sync_upload', src, 'synced/')).toEqual({ success: true, uploaded: 0, skipped: 2, errors: 0 });
    writeFileSync(join(src, 'one.txt'), '111');
    expect(fn('cdn_sync_upload', src, 'synced/')).toEqual({ success: true, uploaded: 1, skipped: 1, errors: 0 });
    expect(fn('cdn_exists', 'synced/link')).toBe(false);
    expect(fn('cdn_read', 'synced/one.txt')).toBe('111');
  });

  // s3rver normalises `..` and `//` out of keys, so those are covered by test/unit/storage/keys.test.ts.
  it('cdn_sync_download fetches a prefix and refuses keys that would leave the folder', async () => {
    for (const [key, body] of [['dl/ok.txt', 'ok'], ['dl/sub/deep.txt', 'deep'], ['dl/..\\..\\escape.txt', 'evil'], ['dl/ctl\u0007.txt', 'evil']]) {
      await raw.send(new PutObjectCommand({ Bucket: fx.bucket, Key: key, Body: body }));
    }
    const dest = join(dir, 'dl-dest');
    const r = fn('cdn_sync_download', 'dl/', dest) as Record<string, unknown>;
    expect(r).toMatchObject({ success: false, downloaded: 2, skipped: 0, errors: 2 });
    expect(readFileSync(join(dest, 'ok.txt'), 'utf8')).toBe('ok');
    expect(readFileSync(join(dest, 'sub/deep.txt'), 'utf8')).toBe('deep');
    expect(existsSync(join(dir, 'escape.txt'))).toBe(false);
    expect(readdirSync(dest).sort()).toEqual(['ok.txt', 'sub']);
    expect(fn('cdn_sync_download', 'dl/', dest)).toMatchObject({ downloaded: 0, skipped: 2 });
  });

  it('cdn_delete removes one key, or a whole folder', () => {
    writeFileSync(join(dir, 'd.txt'), 'd');
    for (const k of ['del/one.txt', 'del/f/a.txt', 'del/f/b.txt']) expect(fn('cdn_upload', join(dir, 'd.txt'), k)).toBe(true);
    expect(fn('cdn_delete', 'del/one.txt')).toBe(true);
    expect(fn('cdn_exists', 'del/one.txt')).toBe(false);
    expect(fn('cdn_delete', 'del/f')).toBe(true);
    expect(fn('cdn_list', 'del/')).toEqual([]);
    expect(fn('cdn_delete', 'del/nothing')).toBe(false);
  });

  it('is callable from a script with camelCase names', () => {
    writeFileSync(join(dir, 's.txt'), 'script');
    const r = evaluate(`cdnUpload('${join(dir, 's.txt')}', 'script/s.txt') && cdn_read('script/s.txt')`, {}, { ctx });
    expect(r.value).toBe('script');
  });

  it('refuses keys with NUL or control characters', () => {
    logs.length = 0;
    expect(fn('cdn_exists', 'a\u0000b')).toBe(false);
    expect(logs.join('\n')).toContain('refused storage key');
  });

  it('never shows the secret key or a signature in its warnings', () => {
    logs.length = 0;
    const wrong: FnContext = { settings: { storage: { ...fx.storage, access_key_id: 'AKIAUNKNOWNKEY0000', secret_access_key: fx.secretAccessKey } }, log: (l) => logs.push(l) };
    expect(getFunction('cdn_read')!(wrong, 'scans/t1/report.txt')).toBe('');
    const text = logs.join('\n');
    expect(text).toMatch(/\[WARN\] cdn_read: storage request failed/);
    expect(text).not.toContain(fx.secretAccessKey);
    expect(text).not.toContain('AKIAUNKNOWNKEY0000');
  });
});

describe('cdn_* functions without storage', () => {
  it('every function answers its failure value and says storage is not enabled', () => {
    const logs: string[] = [];
    const ctx: FnContext = { settings: { storage: { enabled: false, bucket: 'b' } }, log: (l) => logs.push(l) };
    const expected: Record<string, unknown> = {
      cdn_upload: false, cdn_download: false, cdn_exists: false, cdn_delete: false,
      cdn_sync_upload: { success: false, uploaded: 0, skipped: 0, errors: 0 },
      cdn_sync_download: { success: false, downloaded: 0, skipped: 0, errors: 0 },
      cdn_get_presigned_url: '', cdn_list: [], cdn_stat: null, cdn_read: '', cdn_ls_tree: '',
    };
    for (const name of CDN) {
      logs.length = 0;
      expect(getFunction(name)!(ctx, '/tmp/x', 'k'), name).toEqual(expected[name]);
      expect(logs, name).toEqual([`[WARN] ${name}: storage is not enabled: set storage.enabled and the bucket in osm-settings.yaml`]);
    }
  });

  it('a bucket is required too', () => {
    const logs: string[] = [];
    expect(getFunction('cdn_exists')!({ settings: { storage: { enabled: true } }, log: (l) => logs.push(l) }, 'k')).toBe(false);
    expect(logs[0]).toContain('storage is not enabled');
  });
});
