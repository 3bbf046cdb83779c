import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { escapeJs, renderJs, renderShell, shellQuote } from '../../../src/engine/safe-render.js';

const hostile = ['a;id', '$(id)', '`id`', "a'b", 'a"b', 'a\\b', 'x\ny', '-oProxyCommand=x', 'a b', '*', '${HOME}'];

/** What bash prints for `printf '%s' <rendered>` — the value must arrive as one literal word. */
function bashEcho(cmd: string): string {
  return execFileSync('/bin/bash', ['-c', cmd], { encoding: 'utf8' });
}

describe('renderShell', () => {
  it('renders harmless tainted values exactly like the plain template', () => {
    const vars = { host: 'api.example.com', url: 'https://x.example.com:8443/a/b' };
    expect(renderShell('curl {{url}} -H "Host: {{host}}"', vars, new Set(['host', 'url']))).toBe('curl https://x.example.com:8443/a/b -H "Host: api.example.com"');
  });

  for (const v of hostile) {
    it(`keeps ${JSON.stringify(v)} a literal value in every quoting context`, () => {
      const t = new Set(['v']);
      // Unquoted, a value with spaces still splits into words (as in the reference, e.g. a foreach
      // line "1.2.3.4 80"); splitting is not code execution. Everything else stays one literal.
      expect(bashEcho(renderShell("printf '%s' {{v}}", { v }, t))).toBe(v === 'a b' ? 'ab' : v);
      expect(bashEcho(renderShell('printf \'%s\' "{{v}}"', { v }, t))).toBe(v);
      expect(bashEcho(renderShell("printf '%s' 'pre-{{v}}-post'", { v }, t))).toBe(`pre-${v}-post`);
    });
  }

  it('escapes a tainted value reached through parentheses, a filter argument or an arithmetic operand', () => {
    const t = new Set(['v']);
    const v = '$(id)';
    expect(bashEcho(renderShell("printf '%s' {{ (v) }}", { v }, t))).toBe(v);
    expect(bashEcho(renderShell("printf '%s' {{ missing | default: v }}", { v }, t))).toBe(v);
    expect(renderShell('echo {{ 2 * v }}', { v: '21' }, t)).toBe('echo 42');
  });

  it('leaves untainted values as the reference renders them', () => {
    expect(renderShell('echo {{a}}', { a: '$HOME' }, new Set(['other']))).toBe('echo $HOME');
  });
});

describe('renderJs', () => {
  it('turns tainted values into string data inside and outside literals', () => {
    const t = new Set(['v']);
    const vars = { v: "');process.exit(1);('" };
    expect(renderJs("log('{{v}}')", vars, t)).toBe("log('\\');process.exit(1);(\\'')");
    expect(renderJs('f({{v}})', vars, t)).toBe(`f(${JSON.stringify(vars.v)})`);
    expect(renderJs('f(`{{v}}`)', { v: '${x}`' }, t)).toBe('f(`\\${x}\\``)');
    expect(renderJs('n > {{v}}', { v: '5' }, t)).toBe('n > 5');
  });

  it('escapes newlines and line separators in string literals', () => {
    expect(escapeJs('a\nb\u2028', "'")).toBe('a\\nb\\u2028');
  });
});

describe('shellQuote', () => {
  it('quotes only when needed', () => {
    expect(shellQuote('abc.example.com')).toBe('abc.example.com');
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('')).toBe("''");
  });
});
