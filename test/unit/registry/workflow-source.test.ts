import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { classifySource, installWorkflowSource, redactSource } from '../../../src/registry/install-workflow.js';
import { gitClone, gitEnv, gitUrlHost } from '../../../src/registry/git.js';
import { backupPathFor, contentRoot, copyTree, swapFolder } from '../../../src/registry/workflow-tree.js';

let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('workflow source detection', () => {
  it('classifies folders, archives, archive URLs and git URLs', () => {
    const zip = path.join(dir, 'w.zip');
    fs.writeFileSync(zip, 'x');
    const tgz = path.join(dir, 'w.tgz');
    fs.writeFileSync(tgz, 'x');
    expect(classifySource(dir)).toEqual({ kind: 'dir', path: dir });
    expect(classifySource(zip)).toEqual({ kind: 'archive-file', path: zip });
    expect(classifySource(tgz).kind).toBe('archive-file');
    expect(classifySource('https://example.com/a/w.tar.gz?x=1')).toEqual({ kind: 'archive-url', url: 'https://example.com/a/w.tar.gz?x=1' });
    expect(classifySource('https://github.com/j3ssie/osmedeus-workflow')).toEqual({ kind: 'git', url: 'https://github.com/j3ssie/osmedeus-workflow' });
    expect(classifySource('git@github.com:j3ssie/osmedeus-workflow.git').kind).toBe('git');
    expect(classifySource('github.com/j3ssie/osmedeus-workflow')).toEqual({ kind: 'git', url: 'https://github.com/j3ssie/osmedeus-workflow' });
  });

  it('rejects anything else as an unknown source type', () => {
    const txt = path.join(dir, 'notes.txt');
    fs.writeFileSync(txt, 'x');
    for (const s of [txt, path.join(dir, 'missing'), 'file:///etc', 'ftp://x/w.zip', '-c core.sshCommand=id', 'evilgithub.com/x']) {
      expect(() => classifySource(s), s).toThrow(`unknown source type: ${s}`);
    }
  });

  it('redacts credentials in URLs wherever they appear', () => {
    expect(redactSource('https://user:tok@github.com/x.git')).toBe('https://***@github.com/x.git');
    expect(redactSource('failed for https://a:b@h/x and http://c@d/y')).toBe('failed for https://***@h/x and http://***@d/y');
    expect(redactSource('git@github.com:a/b.git')).toBe('git@github.com:a/b.git');
  });
});

describe('git URLs', () => {
  it('accepts https:// and git@host:path only, never an option', () => {
    expect(gitUrlHost('https://github.com/a/b.git')).toBe('github.com');
    expect(gitUrlHost('git@gitlab.com:group/repo.git')).toBe('gitlab.com');
    expect(() => gitUrlHost('http://github.com/a/b')).toThrow(/https:\/\/ or git@/);
    expect(() => gitUrlHost('--upload-pack=id')).toThrow(/must not start with "-"/);
    expect(() => gitUrlHost('ext::sh -c id')).toThrow();
    expect(() => gitUrlHost('git@host:-oProxyCommand=id')).toThrow();
    expect(() => gitUrlHost('https://github.com/a b')).toThrow(/spaces/);
  });

  it('puts a GitHub token in an env-scoped header for github.com only, never in the URL', () => {
    const env = gitEnv('https://github.com/a/b.git', 'tok123');
    expect(env.GIT_CONFIG_KEY_0).toBe('http.https://github.com/.extraheader');
    expect(Buffer.from(String(env.GIT_CONFIG_VALUE_0).replace('Authorization: Basic ', ''), 'base64').toString()).toBe('x-access-token:tok123');
    expect(env.GIT_TERMINAL_PROMPT).toBe('0');
    for (const u of ['https://github.com.evil.com/a', 'https://evil.com/github.com', 'git@github.com:a/b.git']) {
      expect(gitEnv(u, 'tok123').GIT_CONFIG_VALUE_0, u).toBeUndefined();
    }
  });

  it('refuses a private host before running git', async () => {
    await expect(gitClone('https://127.0.0.1/r.git', path.join(dir, 'c'), { allowPrivate: false })).rejects.toThrow(/loopback, link-local or private/);
    await expect(gitClone('https://localhost/r.git', path.join(dir, 'c'), { allowPrivate: false })).rejects.toThrow(/private/);
    expect(fs.existsSync(path.join(dir, 'c'))).toBe(false);
  });
});

describe('workflow trees', () => {
  it('copies regular files and folders, skips .git, refuses symlinks before copying anything', () => {
    const src = path.join(dir, 'src');
    fs.mkdirSync(path.join(src, 'modules'), { recursive: true });
    fs.mkdirSync(path.join(src, '.git'));
    fs.writeFileSync(path.join(src, '.git', 'HEAD'), 'x');
    fs.writeFileSync(path.join(src, 'modules', 'a.yaml'), 'kind: module\n');
    const summary = copyTree(src, path.join(dir, 'out'));
    expect(summary).toEqual({ files: 1, bytes: 13, yamlFiles: 1 });
    expect(fs.existsSync(path.join(dir, 'out', '.git'))).toBe(false);
    fs.symlinkSync('/etc/passwd', path.join(src, 'modules', 'leak.yaml'));
    expect(() => copyTree(src, path.join(dir, 'out2'))).toThrow(/symbolic link \("modules\/leak.yaml"\)/);
    expect(fs.existsSync(path.join(dir, 'out2'))).toBe(false);
  });

  it('uses a lone top folder as the content root', () => {
    fs.mkdirSync(path.join(dir, 'repo-main'));
    fs.writeFileSync(path.join(dir, '.hidden'), '');
    expect(contentRoot(dir)).toBe(path.join(dir, 'repo-main'));
    fs.writeFileSync(path.join(dir, 'top.yaml'), '');
    expect(contentRoot(dir)).toBe(dir);
  });

  it('swaps folders with a unique timestamped backup, and restores the old one if the swap fails', () => {
    const target = path.join(dir, 'workflows');
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, 'old.yaml'), 'old');
    const now = new Date('2025-02-03T04:05:06.789Z');
    expect(backupPathFor(target, now)).toBe(`${target}.backup-20250203T040506789Z`);
    const next = path.join(dir, 'next');
    fs.mkdirSync(next);
    fs.writeFileSync(path.join(next, 'new.yaml'), 'new');
    const backup = swapFolder(next, target, now);
    expect(backup).toBe(`${target}.backup-20250203T040506789Z`);
    expect(fs.readFileSync(path.join(target, 'new.yaml'), 'utf8')).toBe('new');
    expect(fs.readFileSync(path.join(backup, 'old.yaml'), 'utf8')).toBe('old');
    expect(backupPathFor(target, now)).toBe(`${target}.backup-20250203T040506789Z-2`);
    expect(() => swapFolder(path.join(dir, 'does-not-exist'), target, now)).toThrow();
    expect(fs.readFileSync(path.join(target, 'new.yaml'), 'utf8')).toBe('new');
  });

  it('refuses a source folder that contains or is inside the workflows folder', async () => {
    const workflows = path.join(dir, 'base', 'workflows');
    fs.mkdirSync(path.join(workflows, 'm'), { recursive: true });
    fs.writeFileSync(path.join(workflows, 'm', 'a.yaml'), 'x');
    await expect(installWorkflowSource({ source: path.join(dir, 'base'), workflowsDir: workflows, allowPrivate: true })).rejects.toThrow('source overlaps the workflows folder');
    await expect(installWorkflowSource({ source: path.join(workflows, 'm'), workflowsDir: workflows, allowPrivate: true })).rejects.toThrow('source overlaps the workflows folder');
    expect(fs.readdirSync(path.join(dir, 'base'))).toEqual(['workflows']);
  });
});
