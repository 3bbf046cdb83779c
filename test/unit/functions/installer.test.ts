import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { callWith, tempDir } from './call.js';

// The functions block this thread, so the file server runs in its own process (loopback only).
const SERVER = String.raw`
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const root = process.argv[1];
const server = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  if (u.pathname === '/missing.txt') { res.statusCode = 404; return res.end('no'); }
  const file = path.join(root, path.basename(decodeURIComponent(u.pathname)));
  if (!fs.existsSync(file)) { res.statusCode = 404; return res.end('no'); }
  res.setHeader('content-length', fs.statSync(file).size);
  if (req.method === 'HEAD') return res.end();
  fs.createReadStream(file).pipe(res);
}).listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\n'));
`;

const tmp = tempDir();
let server: ChildProcess;
let base = '';
const served = path.join(tmp.dir, 'served');
const LOOPBACK = { allowlist: ['127.0.0.1'] };

beforeAll(async () => {
  fs.mkdirSync(path.join(served, 'src/sub'), { recursive: true });
  fs.writeFileSync(path.join(served, 'hello.txt'), 'hello from the getter\n');
  fs.writeFileSync(path.join(served, 'src/top.txt'), 'top\n');
  fs.writeFileSync(path.join(served, 'src/sub/deep.txt'), 'deep\n');
  execFileSync('tar', ['-czf', path.join(served, 'bundle.tar.gz'), '-C', path.join(served, 'src'), '.']);
  server = spawn(process.execPath, ['-e', SERVER, served], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((ok) => server.stdout!.once('data', (d) => ok(String(d).trim())));
  base = `http://127.0.0.1:${port}`;
});
afterAll(() => {
  server?.kill();
  tmp.cleanup();
});

const ctx = (lines: string[] = [], outbound: { allowlist: string[] } | undefined = LOOPBACK) => ({ log: (l: string) => lines.push(l), ...(outbound ? { outbound } : {}) });

describe('go_getter', () => {
  it('downloads a file into the folder under its URL name', () => {
    const dest = path.join(tmp.dir, 'g1');
    expect(callWith(ctx(), 'go_getter', `${base}/hello.txt`, dest)).toBe(true);
    expect(fs.readFileSync(path.join(dest, 'hello.txt'), 'utf8')).toBe('hello from the getter\n');
  });

  it('extracts an archive into the folder (and keeps it with ?archive=false); the http:: prefix is accepted', () => {
    const dest = path.join(tmp.dir, 'g2');
    expect(callWith(ctx(), 'goGetter', `http::${base}/bundle.tar.gz`, dest)).toBe(true);
    expect(fs.readFileSync(path.join(dest, 'top.txt'), 'utf8')).toBe('top\n');
    expect(fs.readFileSync(path.join(dest, 'sub/deep.txt'), 'utf8')).toBe('deep\n');
    expect(fs.existsSync(path.join(dest, 'bundle.tar.gz'))).toBe(false);
    const keep = path.join(tmp.dir, 'g3');
    expect(callWith(ctx(), 'go_getter', `${base}/bundle.tar.gz?archive=false`, keep)).toBe(true);
    expect(fs.readdirSync(keep)).toEqual(['bundle.tar.gz']);
  });

  it('keeps the file name inside the folder whatever the URL path says', () => {
    const dest = path.join(tmp.dir, 'g4');
    expect(callWith(ctx(), 'go_getter', `${base}/x/..%2F..%2Fhello.txt`, dest)).toBe(true);
    const names = fs.readdirSync(dest);
    expect(names).toHaveLength(1);
    expect(names[0]).not.toContain('/');
    expect(names[0]!.startsWith('.')).toBe(false);
    expect(fs.existsSync(path.join(tmp.dir, 'hello.txt'))).toBe(false);
  });

  it('a failed download is false with a warning; unsupported getters and schemes fail loudly', () => {
    const lines: string[] = [];
    const dest = path.join(tmp.dir, 'g5');
    expect(callWith(ctx(lines), 'go_getter', `${base}/missing.txt`, dest)).toBe(false);
    expect(lines.join('\n')).toMatch(/go_getter: download of .*missing\.txt failed: HTTP 404/);
    expect(fs.readdirSync(dest)).toEqual([]);
    expect(() => callWith(ctx(), 'go_getter', 's3::https://bucket.example.com/x', dest)).toThrow("not supported in osm: go_getter with the 's3::' getter");
    expect(() => callWith(ctx(), 'go_getter', 'file:///etc/passwd', dest)).toThrow('not supported in osm: go_getter for file: URLs');
  });

  it('follows the outbound policy: loopback is refused unless allowlisted', () => {
    const lines: string[] = [];
    const dest = path.join(tmp.dir, 'g6');
    expect(callWith(ctx(lines, { allowlist: [] }), 'go_getter', `${base}/hello.txt`, dest)).toBe(false);
    expect(lines.join('\n')).toMatch(/go_getter: 127\.0\.0\.1 is a loopback address; add it to server\.outbound_allowlist/);
    expect(fs.existsSync(path.join(dest, 'hello.txt'))).toBe(false);
  });
});

describe('nix_install', () => {
  const savedPath = process.env.PATH;
  afterAll(() => {
    process.env.PATH = savedPath;
  });

  it('names the missing nix when it is not on PATH', () => {
    const empty = path.join(tmp.dir, 'empty-bin');
    fs.mkdirSync(empty, { recursive: true });
    process.env.PATH = empty;
    try {
      expect(() => callWith(ctx(), 'nix_install', 'nmap')).toThrow("nix_install: 'nix' is not installed (not found on PATH)");
    } finally {
      process.env.PATH = savedPath;
    }
  });

  it('runs nix with the package as one argv entry (no shell), into a profile when dest is given', () => {
    const bin = path.join(tmp.dir, 'fake-bin');
    const record = path.join(tmp.dir, 'nix-argv.jsonl');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'nix'), `#!${process.execPath}\nrequire('node:fs').appendFileSync(${JSON.stringify(record)}, JSON.stringify(process.argv.slice(2)) + '\\n');\nprocess.exit(process.argv.includes('nixpkgs#broken') ? 3 : 0);\n`);
    fs.chmodSync(path.join(bin, 'nix'), 0o755);
    process.env.PATH = `${bin}${path.delimiter}${savedPath}`;
    try {
      expect(callWith(ctx(), 'nix_install', 'nmap')).toBe(true);
      const profile = path.join(tmp.dir, 'profiles', 'tools');
      expect(callWith(ctx(), 'nixInstall', 'python3.pkgs.requests', profile)).toBe(true);
      const lines: string[] = [];
      expect(callWith(ctx(lines), 'nix_install', 'broken')).toBe(false);
      expect(lines.join('\n')).toContain('nix_install broken failed (exit 3)');
      // hostile names never reach nix
      expect(() => callWith(ctx(), 'nix_install', 'nmap; touch /tmp/x')).toThrow('nix_install: invalid package name');
      expect(() => callWith(ctx(), 'nix_install', '--option')).toThrow('nix_install: invalid package name');
      const calls = fs.readFileSync(record, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(calls).toEqual([
        ['--extra-experimental-features', 'nix-command flakes', 'profile', 'install', 'nixpkgs#nmap'],
        ['--extra-experimental-features', 'nix-command flakes', 'profile', 'install', '--profile', profile, 'nixpkgs#python3.pkgs.requests'],
        ['--extra-experimental-features', 'nix-command flakes', 'profile', 'install', 'nixpkgs#broken'],
      ]);
    } finally {
      process.env.PATH = savedPath;
    }
  });
});

describe('go_getter git:: and go_getter_with_sshkey', () => {
  const savedPath = process.env.PATH;
  afterAll(() => {
    process.env.PATH = savedPath;
  });
  // A local repository with one commit, the "remote" both getters clone.
  const repo = path.join(tmp.dir, 'remote-repo');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' } });
  beforeAll(() => {
    fs.mkdirSync(repo, { recursive: true });
    git('init', '-q');
    fs.writeFileSync(path.join(repo, 'words.txt'), 'admin\nlogin\n');
    git('add', '.');
    git('commit', '-qm', 'first');
  });

  it('go_getter git:: clones the repository into the folder', () => {
    const dest = path.join(tmp.dir, 'gg-git');
    expect(callWith(ctx(), 'go_getter', `git::file://${repo}`, dest)).toBe(true);
    expect(fs.readFileSync(path.join(dest, 'words.txt'), 'utf8')).toBe('admin\nlogin\n');
  });

  it('clones over ssh with only the given key; a missing key or a failed clone is false with a warning', () => {
    // A stand-in ssh: records its arguments, then runs the remote command (git-upload-pack) locally.
    const bin = path.join(tmp.dir, 'ssh-bin');
    const record = path.join(tmp.dir, 'ssh-argv.json');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'ssh'), `#!${process.execPath}\nconst a = process.argv.slice(2);\nrequire('node:fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify(a));\nconst r = require('node:child_process').spawnSync('sh', ['-c', a[a.length - 1]], { stdio: 'inherit' });\nprocess.exit(r.status ?? 1);\n`);
    fs.chmodSync(path.join(bin, 'ssh'), 0o755);
    const key = path.join(tmp.dir, "deploy key's file");
    fs.writeFileSync(key, 'not a real key\n', { mode: 0o600 });
    process.env.PATH = `${bin}${path.delimiter}${savedPath}`;
    try {
      const dest = path.join(tmp.dir, 'gg-ssh');
      expect(callWith(ctx(), 'go_getter_with_sshkey', key, `git::ssh://git@repo.invalid${repo}`, dest)).toBe(true);
      expect(fs.readFileSync(path.join(dest, 'words.txt'), 'utf8')).toBe('admin\nlogin\n');
      const argv = JSON.parse(fs.readFileSync(record, 'utf8')) as string[];
      expect(argv.slice(0, 2)).toEqual(['-i', key]);
      expect(argv).toContain('IdentitiesOnly=yes');
      expect(argv).toContain('BatchMode=yes');
      expect(argv).toContain('git@repo.invalid');

      const lines: string[] = [];
      expect(callWith(ctx(lines), 'goGetterWithSshkey', path.join(tmp.dir, 'no-such-key'), `ssh://git@repo.invalid${repo}`, path.join(tmp.dir, 'gg-nokey'))).toBe(false);
      expect(lines.join('\n')).toContain('the key file');
      expect(callWith(ctx(lines), 'go_getter_with_sshkey', key, 'ssh://git@repo.invalid/no/such/repo', path.join(tmp.dir, 'gg-fail'))).toBe(false);
      expect(lines.join('\n')).toMatch(/go_getter_with_sshkey: clone of ssh:\/\/git@repo\.invalid\/no\/such\/repo failed/);
      expect(() => callWith(ctx(), 'go_getter_with_sshkey', key, '--upload-pack=touch /tmp/x', path.join(tmp.dir, 'gg-x'))).toThrow('not a repository URL');
      expect(() => callWith(ctx(), 'go_getter_with_sshkey', key)).toThrow('key, git_url and dest are required');
    } finally {
      process.env.PATH = savedPath;
    }
  });
});
