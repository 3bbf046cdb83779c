import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { atomicWriteFile } from '../../../src/util/fs-safe.js';

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
