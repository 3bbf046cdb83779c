import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { call, callWith, tempDir } from './call.js';
import { evaluate } from '../../../src/engine/js-runtime.js';
import { splitReport } from '../../../src/engine/functions/markdown.js';

const t = tempDir();
afterAll(t.cleanup);

describe('markdown functions', () => {
  it('render_markdown_from_file answers the raw markdown; print_ prints it', () => {
    const p = t.file('r.md', '# Title\n\ntext\n');
    expect(call('render_markdown_from_file', p)).toBe('# Title\n\ntext\n');
    expect(call('renderMarkdownFromFile', path.join(t.dir, 'none'))).toBe('');
    const lines: string[] = [];
    expect(callWith({ log: (l) => lines.push(l) }, 'print_markdown_from_file', p)).toBe('# Title\n\ntext\n');
    expect(lines).toEqual(['# Title\n\ntext']);
  });

  it('convert_jsonl_to_markdown: header from the first object plus new keys', () => {
    const src = t.file('a.jsonl', '{"host":"a.com","port":443}\n{"host":"b|c","extra":{"x":1}}\nbad\n');
    const out = path.join(t.dir, 'a.md');
    expect(call('convert_jsonl_to_markdown', src, out)).toBe(true);
    expect(fs.readFileSync(out, 'utf8')).toBe(
      '| host | port | extra |\n| --- | --- | --- |\n| a.com | 443 |  |\n| b\\|c |  | {"x":1} |\n',
    );
    expect(call('convert_jsonl_to_markdown', path.join(t.dir, 'none'), out)).toBe(false);
  });

  it('convert_csv_to_markdown', () => {
    const src = t.file('a.csv', 'name,value\nx,"1,2"\n');
    expect(call('convert_csv_to_markdown', src)).toBe('| name | value |\n| --- | --- |\n| x | 1,2 |\n');
    expect(call('convertCsvToMarkdown', path.join(t.dir, 'none.csv'))).toBe('');
  });

  it('convert_sarif_to_markdown', () => {
    const sarif = {
      runs: [{
        tool: { driver: { rules: [{ id: 'R1', shortDescription: { text: 'SQL injection' } }] } },
        results: [{ ruleId: 'R1', level: 'error', message: { text: 'tainted query' }, locations: [{ physicalLocation: { artifactLocation: { uri: 'app.py' }, region: { startLine: 12 } } }] }],
      }],
    };
    const src = t.file('r.sarif', JSON.stringify(sarif));
    const out = path.join(t.dir, 'sarif.md');
    expect(call('convert_sarif_to_markdown', src, out)).toBe(true);
    expect(fs.readFileSync(out, 'utf8')).toContain('| error | app.py:12 | SQL injection | tainted query |');
    expect(call('convert_sarif_to_markdown', t.file('bad.sarif', 'nope'), out)).toBe(false);
  });

  it('splitReport finds fenced blocks and inline spans', () => {
    expect(splitReport('a ```osm-func\nx()\n``` b `y()`{.osm-func} c').map((p) => p.kind)).toEqual(['text', 'block', 'text', 'inline', 'text']);
  });

  it('render_markdown_report renders variables, then osm-func blocks; errors become comments', () => {
    const data = t.file('subs.txt', 'a\nb\nc\n');
    const tpl = t.file('tpl.md', [
      '# Report for {{Target}}',
      'Subdomains: `file_length("{{subs}}")`{.osm-func}',
      '```osm-func',
      'var n = 2; n * 21',
      '```',
      'Broken: `nope()`{.osm-func}',
      'Injected: {{payload}}',
      '',
    ].join('\n'));
    const out = path.join(t.dir, 'report.md');
    const payload = '`exec_cmd("touch pwned")`{.osm-func}';
    const r = evaluate('render_markdown_report(tpl, out)', { tpl, out, Target: 'example.com', subs: data, payload }, { ctx: { cwd: t.dir, log: () => {} } });
    expect(r.value).toBe(true);
    const text = fs.readFileSync(out, 'utf8');
    expect(text).toContain('# Report for example.com');
    expect(text).toContain('Subdomains: 3');
    expect(text).toContain('42');
    expect(text).toMatch(/Broken: <!-- ERROR: .*nope is not defined.* -->/);
    // A variable value is data: it is printed, never executed.
    expect(text).toContain(`Injected: ${payload}`);
    expect(fs.existsSync(path.join(t.dir, 'pwned'))).toBe(false);
    expect(call('render_markdown_report', path.join(t.dir, 'none.md'), out)).toBe(false);
  });

  it('generate_security_report writes <Output>/security-report.md', () => {
    const outDir = path.join(t.dir, 'ws');
    const tpl = t.file('sec.md', 'Target: {{Target}} / `1 + 1`{.osm-func}\n');
    expect(callWith({ output: outDir, log: () => {} }, 'generate_security_report', tpl)).toBe(true);
    expect(fs.readFileSync(path.join(outDir, 'security-report.md'), 'utf8')).toBe('Target:  / 2\n');
    expect(call('generate_security_report', tpl)).toBe(false);
  });
});
