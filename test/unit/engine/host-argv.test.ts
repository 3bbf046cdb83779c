import { describe, expect, it } from 'vitest';
import { hostArgv } from '../../../src/engine/steps/bash.js';
import { SHELL } from '../../../src/engine/process.js';

const PATH = process.env.PATH ?? '/usr/bin:/bin';

describe('hostArgv', () => {
  it('executes plain words directly when the program is on PATH', () => {
    expect(hostArgv('true', PATH)).toEqual(['true']);
    expect(hostArgv('  echo a.example.com --flag=1 ', PATH)).toEqual(['echo', 'a.example.com', '--flag=1']);
  });

  it('keeps the shell for anything a shell would interpret', () => {
    for (const line of ['echo "x"', "echo 'x'", 'echo $HOME', 'ls *.txt', 'a | b', 'a > f', 'a && b', 'a; b', 'X=1 env', 'cd /tmp', 'echo ~', 'export A=1', 'definitely-not-a-command-xyz arg', 'echo a\\ b']) {
      expect(hostArgv(line, PATH)[0]).toBe(SHELL);
    }
  });
});
