/**
 * The completion scripts and the man page are generated from the commander program: walk the
 * program independently of the generator and check every visible command, alias and long flag
 * appears in each of them, so a command added without them (or a generator that drops one) fails.
 */
import { describe, expect, it } from 'vitest';
import { Command, Option } from 'commander';
import { buildProgram } from '../../../src/cli/main.js';
import { completionScript, manPageText } from '../../../src/cli/completion/generate.js';
import { programSpec } from '../../../src/cli/completion/spec.js';
import { bashScript } from '../../../src/cli/completion/bash.js';
import { manPage } from '../../../src/cli/completion/man.js';

interface Visible {
  path: string[];
  cmd: Command;
}

function visibleCommands(root: Command): Visible[] {
  const out: Visible[] = [];
  const walk = (c: Command, path: string[]) => {
    for (const s of c.commands) {
      if ((s as unknown as { _hidden?: boolean })._hidden || s.name() === 'help') continue;
      out.push({ path: [...path, s.name()], cmd: s });
      walk(s, [...path, s.name()]);
    }
  };
  walk(root, []);
  return out;
}

/** The body of one `case` table function of a bash/zsh script. */
function fn(script: string, name: string): string {
  const start = script.indexOf(`${name}() {`);
  expect(start, `${name} missing`).toBeGreaterThanOrEqual(0);
  return script.slice(start, script.indexOf('\n}\n', start));
}

/** The table line of `path` inside a function body. */
function row(body: string, path: string): string {
  return body.split('\n').find((l) => l.startsWith(`    '${path}')`)) ?? '';
}

const program = buildProgram();
const commands = visibleCommands(program);
const rootFlags = program.options.filter((o) => !o.hidden);

describe('completion scripts and man page cover the program', () => {
  it('walks a real program (the test itself has something to check)', () => {
    expect(commands.length).toBeGreaterThan(40);
    expect(commands.map((c) => c.path.join(' '))).toEqual(expect.arrayContaining(['run', 'workflow show', 'worker queue new', 'completion']));
  });

  for (const shell of ['bash', 'zsh'] as const) {
    it(`${shell}: every command, alias and flag is in the tables`, () => {
      const script = completionScript(shell);
      const canonical = fn(script, '_osm_canonical');
      const flags = fn(script, '_osm_flags');
      const missing: string[] = [];
      for (const { path, cmd } of commands) {
        const parent = path.slice(0, -1).join(' ');
        for (const word of [cmd.name(), ...cmd.aliases()]) {
          if (!canonical.includes(`'${parent}|${word}') echo '${cmd.name()}'`)) missing.push(`command ${[...path.slice(0, -1), word].join(' ')}`);
        }
        const line = row(flags, path.join(' '));
        for (const o of cmd.options.filter((x) => !x.hidden)) {
          for (const n of [o.long, o.short].filter(Boolean) as string[]) {
            if (!line.includes(`'${n}${shell === 'zsh' ? ':' : "'"}`)) missing.push(`flag ${path.join(' ')} ${n}`);
          }
        }
      }
      for (const o of rootFlags) if (!row(flags, '').includes(`'${o.long}`)) missing.push(`global flag ${o.long}`);
      expect(missing).toEqual([]);
    });
  }

  it('fish: every command, alias and flag has a complete line', () => {
    const script = completionScript('fish');
    const missing: string[] = [];
    for (const { path, cmd } of commands) {
      const parent = path.slice(0, -1).join(' ');
      for (const word of [cmd.name(), ...cmd.aliases()]) {
        if (!script.includes(`-n '__osm_at \\'${parent}\\' 0' -a '${word}'`)) missing.push(`command ${[...path.slice(0, -1), word].join(' ')}`);
      }
      for (const o of cmd.options.filter((x) => !x.hidden)) {
        if (o.long && !script.includes(`-n '__osm_at \\'${path.join(' ')}\\''`)) missing.push(`flags of ${path.join(' ')}`);
        const lines = script.split('\n').filter((l) => l.includes(`-n '__osm_at \\'${path.join(' ')}\\''`));
        if (o.long && !lines.some((l) => l.includes(` -l '${o.long!.slice(2)}'`))) missing.push(`flag ${path.join(' ')} ${o.long}`);
      }
    }
    for (const o of rootFlags) if (!script.includes(` -l '${o.long!.slice(2)}'`)) missing.push(`global flag ${o.long}`);
    expect(missing).toEqual([]);
  });

  it('man page: a section per command listing its aliases and every long flag', () => {
    const man = manPageText();
    const missing: string[] = [];
    const esc = (s: string) => s.replace(/-/g, '\\-');
    for (const { path, cmd } of commands) {
      const title = `.SS "${esc(['osm', ...path].join(' '))}"`;
      const start = man.indexOf(`${title}\n`);
      if (start < 0) {
        missing.push(`section ${path.join(' ')}`);
        continue;
      }
      const next = man.indexOf('\n.SS ', start + 1);
      const section = man.slice(start, next < 0 ? undefined : next);
      for (const a of cmd.aliases()) if (!section.includes(`\\fB${esc(a)}\\fR`)) missing.push(`alias ${a} of ${path.join(' ')}`);
      for (const o of cmd.options.filter((x) => !x.hidden)) {
        if (o.long && !section.includes(`\\fB${esc(o.long)}\\fR`)) missing.push(`flag ${path.join(' ')} ${o.long}`);
      }
    }
    for (const o of rootFlags) if (!man.includes(`\\fB${esc(o.long!)}\\fR`)) missing.push(`global flag ${o.long}`);
    expect(missing).toEqual([]);
  });

  it('hidden commands and flags stay out; choices and dynamic values are wired', () => {
    const bash = completionScript('bash');
    expect(bash).not.toContain("'__complete'");
    expect(bash).not.toContain("'|execute'");
    expect(bash).not.toContain('--lock-duration');
    expect(bash).toContain(`'run|-f'|'run|--flow') echo 'dyn:flows'`);
    expect(bash).toContain(`'run|-m'|'run|--module') echo 'dyn:modules'`);
    expect(bash).toContain(`'run|--heuristics-check') echo 'choices:none basic advanced'`);
    expect(bash).toContain(`'query steps|0') echo 'dyn:runs'`);
    expect(bash).toContain(`'workflow show|0') echo 'dyn:workflows:files'`);
  });

  it('a command added to a program appears without touching the generator', () => {
    const p = new Command('osm').option('-b, --base-folder <dir>', 'base');
    p.command('brand-new').description('a new command').addOption(new Option('--color <c>', 'colour').choices(['red', 'blue']));
    const spec = programSpec(p);
    const bash = bashScript(spec);
    expect(bash).toContain(`'|brand-new') echo 'brand-new'`);
    expect(bash).toContain(`'brand-new|--color') echo 'choices:red blue'`);
    expect(manPage(spec, '1.0.0', '2026-01-01')).toContain('.SS "osm brand\\-new"');
  });

  it('man page text that looks like a roff request is escaped', () => {
    const p = new Command('osm');
    p.command('x').description(".TH injected\n'br also\\ backslash");
    const man = manPage(programSpec(p), '1', '2026-01-01');
    expect(man).not.toMatch(/^\.TH injected/m);
    expect(man).not.toMatch(/^'br/m);
    expect(man).toContain('\\&.TH injected');
  });
});
