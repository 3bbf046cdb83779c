/** Path confinement of agent tools: model-given paths stay inside the step's folders, symlinks included. */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { confinePath, signatureParams } from '../../../src/engine/steps/agent-tools.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir('osm-agent-tools-');
afterAll(() => tmp.cleanup());
const root = join(tmp.dir, 'out');
mkdirSync(join(root, 'sub'), { recursive: true });
writeFileSync(join(tmp.dir, 'secret.txt'), 'x');
symlinkSync(tmp.dir, join(root, 'escape'));
const real = realpathSync(root);

describe('confinePath', () => {
  it('resolves relative paths inside the folder, including files not written yet', () => {
    expect(confinePath('a.txt', root, [real])).toBe(join(root, 'a.txt'));
    expect(confinePath('sub/new/deep.txt', root, [real])).toBe(join(root, 'sub/new/deep.txt'));
    expect(confinePath(join(root, 'sub'), root, [real])).toBe(join(root, 'sub'));
    expect(confinePath('*.txt', root, [real])).toBe(join(root, '*.txt'));
  });

  it('refuses paths outside: absolute, dot-dot, through a symlink, in a glob, NUL, non-strings', () => {
    for (const bad of ['/etc/passwd', '../secret.txt', 'sub/../../secret.txt', 'escape/secret.txt', 'escape/*.txt', '../*/secret.txt']) {
      expect(() => confinePath(bad, root, [real]), bad).toThrow(/outside the folders this agent may use/);
    }
    expect(() => confinePath('a\0b', root, [real])).toThrow(/NUL/);
    expect(() => confinePath(42, root, [real])).toThrow(/non-empty string/);
    expect(() => confinePath(' ', root, [real])).toThrow(/non-empty string/);
  });

  it('a root is a folder, not a name prefix', () => {
    mkdirSync(`${root}-other`, { recursive: true });
    expect(() => confinePath(`${root}-other/x`, root, [real])).toThrow(/outside/);
  });
});

describe('signatureParams', () => {
  it('reads names and optional markers of catalogue signatures', () => {
    expect(signatureParams('clean_sub(path, target?)')).toEqual([{ name: 'path', optional: false }, { name: 'target', optional: true }]);
    expect(signatureParams('uuid()')).toEqual([]);
  });
});
