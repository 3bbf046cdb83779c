import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { atomicWriteFile, atomicWriteFiles } from '../../../src/util/fs-safe.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-atomic-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('atomicWriteFile', () => {
  it('replaces the file in one rename and leaves nothing else', () => {
    const file = path.join(dir, 'a', 'out.txt');
    atomicWriteFile(file, 'one');
    atomicWriteFile(file, 'two', 0o600);
    expect(fs.readFileSync(file, 'utf8')).toBe('two');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['out.txt']);
  });

  it('a failed rename (the path is a folder) throws and leaves no temporary file behind', () => {
    const target = path.join(dir, 'b', 'is-a-folder');
    fs.mkdirSync(path.join(target, 'inner'), { recursive: true });
    expect(() => atomicWriteFile(target, 'report')).toThrow();
    expect(fs.readdirSync(path.dirname(target))).toEqual(['is-a-folder']);
  });
});

describe('atomicWriteFiles', () => {
  it('writes one text under several names of a folder, replacing what was there, and leaves nothing else', () => {
    const folder = path.join(dir, 'c');
    const [a, b] = [path.join(folder, 'state.json'), path.join(folder, 'completed.json')];
    atomicWriteFiles([a, b], 'first');
    atomicWriteFiles([a, b], 'second');
    expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['second', 'second']);
    expect(fs.readdirSync(folder).sort()).toEqual(['completed.json', 'state.json']);
    // One file under both names: written once.
    expect(fs.statSync(a).ino).toBe(fs.statSync(b).ino);
    // The next write replaces both names; the old file is untouched under neither.
    atomicWriteFiles([a], 'third');
    expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['third', 'second']);
  });

  it('names in different folders are written one by one', () => {
    const [a, b] = [path.join(dir, 'd1', 'x.json'), path.join(dir, 'd2', 'x.json')];
    atomicWriteFiles([a, b], 'both');
    expect([fs.readFileSync(a, 'utf8'), fs.readFileSync(b, 'utf8')]).toEqual(['both', 'both']);
    expect(fs.statSync(a).ino).not.toBe(fs.statSync(b).ino);
  });

  it('a name that cannot be replaced (a folder) throws and leaves no temporary file', () => {
    const folder = path.join(dir, 'e');
    fs.mkdirSync(path.join(folder, 'taken', 'inner'), { recursive: true });
    expect(() => atomicWriteFiles([path.join(folder, 'ok.json'), path.join(folder, 'taken')], 'x')).toThrow();
    expect(fs.readdirSync(folder).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});
