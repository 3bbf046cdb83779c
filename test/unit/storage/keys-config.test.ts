/** Storage key safety, provider settings and message scrubbing (no server needed). */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { checkKey, folderPrefix, keySegments, localTarget } from '../../../src/storage/keys.js';
import { resolveStorage } from '../../../src/storage/config.js';
import { clientFor, scrubStorageText, storageFailure } from '../../../src/storage/client.js';
import { tempDir } from '../../helpers/tmp.js';

describe('storage keys as local paths', () => {
  it.each([
    ['../escape.txt', 'parent directory segment'],
    ['a/../../escape.txt', 'parent directory segment'],
    ['/etc/passwd', 'absolute path'],
    ['C:/Windows/x', 'absolute path'],
    ['a\\..\\b', 'backslash'],
    ['a\u0000b', 'NUL byte'],
    ['a\u0007b', 'control character'],
    ['a//b', 'empty or "." segment'],
    ['./a', 'empty or "." segment'],
  ])('refuses %j (%s)', (key, why) => {
    expect(() => keySegments(key)).toThrow(why);
  });

  it('places a safe key under the destination, creating its folders', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const target = await localTarget(join(dir, 'dest'), 'a/b/c.txt');
      expect(target).toBe(join(dir, 'dest/a/b/c.txt'));
      expect(existsSync(join(dir, 'dest/a/b'))).toBe(true);
      await expect(localTarget(join(dir, 'dest'), '../x')).rejects.toThrow('refused storage key');
      expect(readdirSync(dir)).toEqual(['dest']);
    } finally {
      cleanup();
    }
  });

  it('refuses a key whose folder is a link leading outside the destination', async () => {
    const { dir, cleanup } = tempDir();
    try {
      mkdirSync(join(dir, 'dest'));
      mkdirSync(join(dir, 'outside'));
      symlinkSync(join(dir, 'outside'), join(dir, 'dest/link'));
      await expect(localTarget(join(dir, 'dest'), 'link/planted.txt')).rejects.toThrow('leads outside the destination');
    } finally {
      cleanup();
    }
  });

  it('checks keys callers name', () => {
    expect(checkKey('/a/b')).toBe('a/b');
    expect(() => checkKey('')).toThrow('empty key');
    expect(() => checkKey('a\nb')).toThrow('control character');
    expect(() => checkKey('x'.repeat(1025))).toThrow('1024 bytes');
    expect(folderPrefix('a/b')).toBe('a/b/');
    expect(folderPrefix('')).toBe('');
  });
});

describe('storage settings per provider', () => {
  const base = { enabled: true, bucket: 'bkt', access_key_id: 'id', secret_access_key: 'secret' };
  const of = (s: Record<string, unknown>) => resolveStorage({ storage: { ...base, ...s } });

  it('refuses disabled storage or a missing bucket with the one message', () => {
    const msg = 'storage is not enabled: set storage.enabled and the bucket in osm-settings.yaml';
    expect(() => resolveStorage({ storage: { ...base, enabled: false } })).toThrow(msg);
    expect(() => resolveStorage({ storage: { ...base, bucket: '' } })).toThrow(msg);
    expect(() => resolveStorage({})).toThrow(msg);
  });

  it('s3 uses AWS endpoints unless one is given', () => {
    expect(of({ provider: 's3' })).toMatchObject({ region: 'us-east-1', forcePathStyle: false, presignSeconds: 3600 });
    expect(of({ provider: 's3' }).endpoint).toBeUndefined();
    expect(of({ provider: 's3', path_style: true, region: 'eu-west-1', presign_expiry: '2h' })).toMatchObject({ region: 'eu-west-1', forcePathStyle: true, presignSeconds: 7200 });
  });

  it('minio needs an endpoint and uses path-style addressing', () => {
    expect(() => of({ provider: 'minio' })).toThrow('provider minio needs storage.endpoint');
    expect(of({ provider: 'minio', endpoint: 'minio.local:9000', use_ssl: false })).toMatchObject({ endpoint: 'http://minio.local:9000', forcePathStyle: true });
    expect(of({ provider: 'minio', endpoint: 'minio.local:9000' }).endpoint).toBe('https://minio.local:9000');
  });

  it('r2 builds its endpoint from account_id and signs for region auto', () => {
    expect(of({ provider: 'r2', account_id: 'abc123' })).toMatchObject({ endpoint: 'https://abc123.r2.cloudflarestorage.com', region: 'auto' });
    expect(of({ provider: 'r2', endpoint: 'abc123.r2.cloudflarestorage.com' }).endpoint).toBe('https://abc123.r2.cloudflarestorage.com');
    expect(() => of({ provider: 'r2' })).toThrow('storage.account_id');
    expect(() => of({ provider: 'r2', account_id: 'evil.com/x' })).toThrow('storage.account_id');
  });

  it('gcs, spaces and oci map to their S3 interoperability endpoints', () => {
    expect(of({ provider: 'gcs' })).toMatchObject({ endpoint: 'https://storage.googleapis.com', region: 'auto' });
    expect(of({ provider: 'spaces', region: 'nyc3' })).toMatchObject({ endpoint: 'https://nyc3.digitaloceanspaces.com', region: 'us-east-1' });
    expect(() => of({ provider: 'spaces' })).toThrow('Spaces region');
    expect(of({ provider: 'oci', account_id: 'ns1', region: 'eu-frankfurt-1' })).toMatchObject({ endpoint: 'https://ns1.compat.objectstorage.eu-frankfurt-1.oraclecloud.com', forcePathStyle: true });
    expect(() => of({ provider: 'oci', region: 'eu-frankfurt-1' })).toThrow('namespace');
  });

  it('refuses endpoints with credentials or another scheme', () => {
    expect(() => of({ provider: 'minio', endpoint: 'http://u:p@h:9000' })).toThrow('must not carry credentials');
    expect(() => of({ provider: 'minio', endpoint: 'ftp://h' })).toThrow('http(s) URL');
    expect(() => of({ provider: 'nope' })).toThrow('unknown provider');
  });

  it('reads the new settings: prefix, serve, upload_outputs', () => {
    expect(of({ prefix: '/team//a/', serve: 'redirect', upload_outputs: true })).toMatchObject({ prefix: 'team/a/', serve: 'redirect', uploadOutputs: true });
    expect(of({})).toMatchObject({ prefix: '', serve: 'stream', uploadOutputs: false });
  });
});

describe('storage messages', () => {
  it('scrub keys, signatures and credentials', () => {
    const cfg = { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG' };
    const text = 'GET https://h/b/k?X-Amz-Credential=AKIAEXAMPLE%2F2024&X-Amz-Signature=abcdef0123456789abcdef failed; key wJalrXUtnFEMI/K7MDENG; Credential=AKIAEXAMPLE/20240101/us-east-1/s3/aws4_request, Signature=0123456789abcdef0123 <StringToSign>AWS4 x</StringToSign>';
    const out = scrubStorageText(text, cfg);
    for (const secret of ['AKIAEXAMPLE', 'wJalrXUtnFEMI', 'abcdef0123456789abcdef', '0123456789abcdef0123', 'AWS4 x']) expect(out).not.toContain(secret);
    expect(out).toContain('X-Amz-Signature=[REDACTED]');
  });

  it('turn SDK errors into catalogue errors without secrets', () => {
    const err = Object.assign(new Error('The request signature we calculated does not match (key wJalrXUtnFEMI/K7MDENG)'), { name: 'SignatureDoesNotMatch', $metadata: { httpStatusCode: 403 } });
    const e = storageFailure(err, { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG' }, 'read k');
    expect(e.code).toBe('OSM_ERR_STORAGE');
    expect(e.message).toBe('storage request failed: read k: SignatureDoesNotMatch: The request signature we calculated does not match (key [REDACTED]) (HTTP 403)');
  });
});

describe('storage clients under an outbound policy', () => {
  it('refuse a loopback or metadata endpoint unless the allowlist opens it', () => {
    const cfg = resolveStorage({ storage: { enabled: true, bucket: 'b', provider: 'minio', endpoint: 'http://127.0.0.1:9000' } });
    expect(() => clientFor(cfg, { outbound: { allowlist: [] } })).toThrow('the storage endpoint is refused');
    const meta = resolveStorage({ storage: { enabled: true, bucket: 'b', provider: 'minio', endpoint: 'http://169.254.169.254' } });
    expect(() => clientFor(meta, { outbound: { allowlist: [] } })).toThrow('the storage endpoint is refused');
    const h = clientFor(cfg, { outbound: { allowlist: ['127.0.0.1'] } });
    h.close();
    clientFor(cfg).close();
  });
});
