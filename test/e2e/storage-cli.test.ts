/**
 * `osm storage ls|push|pull|pull-workspace|push-workspace` (the built CLI) against s3rver on
 * loopback: files and folders both ways, progress for big files, hostile keys refused with
 * nothing written outside the destination, workspaces synced with data_source cloud, and the
 * secret key never printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { runOsm } from '../helpers/cli.js';
import { startS3, writeStorageSettings, type S3Fixture } from '../helpers/s3.js';
import { tempDir } from '../helpers/tmp.js';
import { createAppContext } from '../../src/services/context.js';

const s3 = await startS3();

describe.skipIf(!s3)('osm storage', () => {
  const fx = s3 as S3Fixture;
  const { dir, cleanup } = tempDir('osm-storage-cli-');
  const base = join(dir, 'base');
  const work = join(dir, 'work');
  const osm = (...args: string[]) => runOsm(['-b', base, ...args], { cwd: work });
  /** The command's JSON output; when there is none, an error that shows what it printed instead. */
  const jsonOf = (r: { code: number | null; stdout: string; stderr: string }) => {
    try {
      return JSON.parse(r.stdout);
    } catch {
      throw new Error(`no JSON on stdout (exit ${r.code}): ${r.stdout}\n${r.stderr}`);
    }
  };
  let raw: S3Client;

  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    await writeStorageSettings(base, fx.storage);
    raw = new S3Client({ endpoint: fx.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: fx.accessKeyId, secretAccessKey: fx.secretAccessKey } });
  });
  afterAll(async () => {
    raw?.destroy();
    await fx.close();
    cleanup();
  });

  it('pushes a file, lists it and pulls it back', async () => {
    writeFileSync(join(work, 'notes.txt'), 'some notes\n');
    const push = await osm('storage', 'push', 'notes.txt', 'docs/notes.txt');
    expect(push.stderr).toBe('');
    expect(push.code).toBe(0);
    expect(push.stdout).toMatch(/Pushed .*notes\.txt → docs\/notes\.txt \(11 B\)/);

    const ls = await osm('storage', 'ls');
    expect(ls.code).toBe(0);
    expect(ls.stdout).toContain('docs/');
    const lsJson = jsonOf(await osm('--json', 'storage', 'ls', 'docs'));
    expect(lsJson.objects).toEqual([expect.objectContaining({ key: 'docs/notes.txt', size: 11 })]);

    const pull = await osm('storage', 'pull', 'docs/notes.txt', 'copy.txt');
    expect(pull.code).toBe(0);
    expect(readFileSync(join(work, 'copy.txt'), 'utf8')).toBe('some notes\n');
    // into an existing folder, under the key's name
    mkdirSync(join(work, 'into'));
    expect((await osm('storage', 'pull', 'docs/notes.txt', 'into')).code).toBe(0);
    expect(readFileSync(join(work, 'into/notes.txt'), 'utf8')).toBe('some notes\n');

    // osm eval checks a set-up as in the reference: the CLI's evaluations see the storage settings
    const ev = await osm('eval', 'cdn_ls_tree("docs")');
    expect(ev.code).toBe(0);
    expect(ev.stdout).toContain('└── notes.txt (11 B)');

    const missing = await osm('storage', 'pull', 'docs/none.txt');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('not found in storage: docs/none.txt');
  });

  it('pushes and pulls folders with --recursive, skipping unchanged files', async () => {
    mkdirSync(join(work, 'tree/sub'), { recursive: true });
    writeFileSync(join(work, 'tree/a.txt'), 'a');
    writeFileSync(join(work, 'tree/sub/b.txt'), 'b');
    const noFlag = await osm('storage', 'push', 'tree');
    expect(noFlag.code).not.toBe(0);
    expect(noFlag.stderr).toContain('is a folder: add --recursive');

    const first = jsonOf(await osm('--json', 'storage', 'push', '--recursive', 'tree', 'folders/tree'));
    expect(first.uploaded.sort()).toEqual(['folders/tree/a.txt', 'folders/tree/sub/b.txt']);
    const again = await osm('storage', 'push', '-r', 'tree', 'folders/tree');
    expect(again.stdout).toContain('Pushed 0 file(s)');
    expect(again.stdout).toContain('2 unchanged');

    const pull = await osm('storage', 'pull', '--recursive', 'folders/tree', 'tree-back');
    expect(pull.code).toBe(0);
    expect(readFileSync(join(work, 'tree-back/sub/b.txt'), 'utf8')).toBe('b');
  });

  it('shows progress while a big file travels', async () => {
    writeFileSync(join(work, 'big.bin'), Buffer.alloc(9 * 1024 * 1024, 1));
    const push = await osm('storage', 'push', 'big.bin', 'big/big.bin');
    expect(push.code).toBe(0);
    expect(push.stderr).toMatch(/◆ big\/big\.bin: 100% \(9\.0 MiB of 9\.0 MiB\)/);
    const pull = await osm('storage', 'pull', 'big/big.bin', 'big-back.bin');
    expect(pull.stderr).toMatch(/◆ big\/big\.bin: 100%/);
    expect(readFileSync(join(work, 'big-back.bin')).length).toBe(9 * 1024 * 1024);
  });

  it('refuses hostile keys on pull and writes nothing outside the destination', async () => {
    for (const key of ['evil/ok.txt', 'evil/..\\..\\outside.txt', 'evil/x\u001b[2J.txt']) {
      await raw.send(new PutObjectCommand({ Bucket: fx.bucket, Key: key, Body: 'x' }));
    }
    const before = readdirSync(dir).sort();
    const r = await osm('storage', 'pull', '-r', 'evil/', 'evil-dest');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('refused storage key');
    expect(r.stderr).toContain('backslash');
    // a key's escape sequence is shown escaped, never sent to the terminal
    expect(r.stderr + r.stdout).not.toContain('\u001b[2J');
    expect(readdirSync(join(work, 'evil-dest'))).toEqual(['ok.txt']);
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(existsSync(join(work, 'outside.txt'))).toBe(false);
  });

  it('pushes a workspace and pulls it back as data_source cloud', async () => {
    const wsDir = join(base, 'workspaces', 'cloud.example');
    mkdirSync(join(wsDir, 'subdomain'), { recursive: true });
    writeFileSync(join(wsDir, 'subdomain/subs.txt'), 'a.cloud.example\n');
    writeFileSync(join(wsDir, 'run-state.json'), '{}');
    const push = jsonOf(await osm('--json', 'storage', 'push-workspace', 'cloud.example'));
    expect(push).toMatchObject({ workspace: 'cloud.example', prefix: 'workspaces/cloud.example/' });
    expect(push.uploaded.sort()).toEqual(['workspaces/cloud.example/run-state.json', 'workspaces/cloud.example/subdomain/subs.txt']);

    rmSync(wsDir, { recursive: true });
    const pull = await osm('storage', 'pull-workspace', 'cloud.example');
    expect(pull.code).toBe(0);
    expect(pull.stdout).toContain('Workspace cloud.example is now data_source cloud');
    expect(readFileSync(join(wsDir, 'subdomain/subs.txt'), 'utf8')).toBe('a.cloud.example\n');
    const app = createAppContext({ baseFolder: base });
    try {
      expect(app.store.workspaces.get('cloud.example')).toMatchObject({ data_source: 'cloud', local_path: wsDir });
    } finally {
      app.close();
    }

    const bad = await osm('storage', 'pull-workspace', '../../etc');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/Invalid workspace name/i);
    const none = await osm('storage', 'pull-workspace', 'nothing-here');
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('not found in storage: workspaces/nothing-here/');
  });

  it('never prints the secret key, and says when storage is off', async () => {
    const other = join(dir, 'base-wrong');
    await writeStorageSettings(other, { ...fx.storage, access_key_id: 'AKIANOSUCHKEY00000' });
    const r = await runOsm(['-b', other, 'storage', 'ls'], { cwd: work });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('storage request failed');
    expect(r.stdout + r.stderr).not.toContain(fx.secretAccessKey);
    expect(r.stdout + r.stderr).not.toContain('AKIANOSUCHKEY00000');

    const off = join(dir, 'base-off');
    await writeStorageSettings(off, { enabled: false });
    const o = await runOsm(['-b', off, 'storage', 'ls'], { cwd: work });
    expect(o.code).not.toBe(0);
    expect(o.stderr).toContain('storage is not enabled: set storage.enabled and the bucket in osm-settings.yaml');
  });
});
