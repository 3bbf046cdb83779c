import { describe, expect, it } from 'vitest';
import {
  TemplateError,
  convertLoopSyntax,
  fixDanglingOperators,
  referencedVariables,
  render,
  renderDeep,
  renderExcept,
  renderLoop,
  valueToString,
} from '../../../src/workflow/template.js';
import { OsmError } from '../../../src/errors.js';

const vars = {
  Target: 'example.com',
  Output: '/ws/example.com',
  n: 5,
  ratio: 1.5,
  flag: true,
  off: false,
  nothing: null,
  list: ['a', 'b', { c: 'deep' }],
  step_http_resp: { status_code: 200, headers: { 'content-type': 'text/html' } },
  event: { data: { url: 'https://x.test/a' } },
  evil: '{{Target}} $(id)',
  'param-a': 'dashed',
};

describe('render', () => {
  it('returns strings without {{ untouched (fast path), including bash syntax', () => {
    const text = 'echo ${HOME} [[ -f x ]] {% not a tag %} > ';
    expect(render(text, vars)).toBe(text);
  });

  it('substitutes plain names with or without whitespace', () => {
    expect(render('t={{Target}} t={{ Target }} t={{   Target\t}}', vars)).toBe('t=example.com t=example.com t=example.com');
  });

  it('looks up dotted paths into objects and arrays', () => {
    expect(render('{{ step_http_resp.status_code }}', vars)).toBe('200');
    expect(render('{{ event.data.url }}', vars)).toBe('https://x.test/a');
    expect(render('{{list.1}} {{list[0]}} {{list.2.c}}', vars)).toBe('b a deep');
    expect(render('{{ step_http_resp.headers["content-type"] }}', vars)).toBe('text/html');
  });

  it('renders undefined and null as empty, booleans lower-case, numbers decimal', () => {
    expect(render('[{{missing}}][{{missing.deeper.still}}][{{nothing}}]', vars)).toBe('[][][]');
    expect(render('{{flag}} {{off}}', vars)).toBe('true false');
    expect(render('{{n}} {{ratio}}', vars)).toBe('5 1.5');
  });

  it('renders objects and arrays as JSON', () => {
    expect(render('{{ event.data }}', vars)).toBe('{"url":"https://x.test/a"}');
    expect(render('{{ list }}', vars)).toBe('["a","b",{"c":"deep"}]');
  });

  it('never walks into the prototype chain', () => {
    expect(render('[{{ Target.length }}][{{ event.constructor }}][{{ list.__proto__ }}][{{ toString }}]', vars)).toBe('[][][][]');
  });

  it('supports names containing "-" as literal names', () => {
    expect(render('{{ param-a }}', vars)).toBe('dashed');
  });

  it('throws TemplateError for an unclosed {{', () => {
    expect(() => render('echo {{ Target', vars)).toThrow(TemplateError);
    try {
      render('echo {{ Target', vars);
    } catch (err) {
      expect(err).toBeInstanceOf(OsmError);
      expect((err as OsmError).code).toBe('OSM_ERR_TEMPLATE');
      expect((err as OsmError).status).toBe(400);
      expect((err as OsmError).message).toMatch(/^template rendering failed: /);
    }
  });

  it('keeps {% and {# literal (bash ${#arr[@]}) when the string is a template', () => {
    expect(render('{% if x %}{{Target}}', vars)).toBe('{% if x %}example.com');
    expect(render('echo ${#arr[@]} {{Target}}', vars)).toBe('echo ${#arr[@]} example.com');
  });

  it('throws for malformed expressions', () => {
    expect(() => render('{{ }}', vars)).toThrow(TemplateError);
    expect(() => render('{{ a b }}', vars)).toThrow(TemplateError);
    expect(() => render('{{ .State.Running }}', vars)).toThrow(TemplateError);
    expect(() => render('{{ x | nosuchfilter }}', vars)).toThrow(/unknown filter/);
  });

  it('never re-renders substituted values (single pass)', () => {
    expect(render('echo {{evil}}', vars)).toBe('echo {{Target}} $(id)');
    expect(render('{{a}}{{b}}', { a: '{{', b: 'Target}}' })).toBe('{{Target}}');
  });

  it('supports a few filters', () => {
    expect(render('{{ missing | default:"x" }} {{ Target | upper }} {{ list | length }}', vars)).toBe('x EXAMPLE.COM 3');
    expect(render("echo {{ v | quote }}", { v: "it's" })).toBe(`echo 'it'\\''s'`);
    expect(render('{{ missing | default:Target }}', vars)).toBe('example.com');
  });
});

describe('fixDanglingOperators', () => {
  it('completes comparisons left dangling by empty variables', () => {
    expect(render('file_length(x) > {{n_missing}}', vars)).toBe('file_length(x) > 0');
    expect(render('file_length(x) > {{n}}', vars)).toBe('file_length(x) > 5');
    expect(fixDanglingOperators('a >= ')).toBe('a >= 0');
    expect(fixDanglingOperators('a <=')).toBe('a <= 0');
    expect(fixDanglingOperators('a < ')).toBe('a < 0');
    expect(fixDanglingOperators('(a > )')).toBe('(a > 0)');
    expect(fixDanglingOperators('(a >= )')).toBe('(a >= 0)');
    expect(fixDanglingOperators('f(a == ) && x')).toBe('f(a == 0) && x');
    expect(fixDanglingOperators('(a != )')).toBe('(a != 0)');
    expect(fixDanglingOperators("'x' == ")).toBe("'x' == ''");
    expect(fixDanglingOperators("'x' !=")).toBe("'x' != ''");
  });

  it('leaves complete expressions alone', () => {
    expect(fixDanglingOperators('a > 1 && b == 2')).toBe('a > 1 && b == 2');
    expect(fixDanglingOperators('cat x 2>&1 | tee y')).toBe('cat x 2>&1 | tee y');
  });

  it('is applied to rendered strings only (fast path untouched)', () => {
    expect(render('a == ', vars)).toBe('a == ');
    expect(render('{{ missing }} == ', vars)).toBe(" == ''");
  });
});

describe('renderLoop', () => {
  it('converts [[x]] to {{x}} and renders', () => {
    expect(renderLoop('echo [[url]] > {{Output}}/[[_url_]].txt', { ...vars, url: 'https://a/b', _url_: 'https___a_b' })).toBe(
      'echo https://a/b > /ws/example.com/https___a_b.txt',
    );
  });

  it('leaves bash [[ tests ]] alone', () => {
    expect(convertLoopSyntax('[[ -f "$x" ]] && echo [[ item ]]')).toBe('[[ -f "$x" ]] && echo {{ item }}');
  });

  it('does not render loop values again', () => {
    expect(renderLoop('echo [[item]]', { item: '[[Target]] {{Target}}', Target: 'no' })).toBe('echo [[Target]] {{Target}}');
  });
});

describe('renderDeep', () => {
  it('renders every string in objects and arrays, not keys', () => {
    const input = { '{{Target}}': ['{{Target}}', 1, true, { u: '{{ event.data.url }}' }], plain: 'x' };
    expect(renderDeep(input, vars)).toEqual({ '{{Target}}': ['example.com', 1, true, { u: 'https://x.test/a' }], plain: 'x' });
    expect(input['{{Target}}'][0]).toBe('{{Target}}');
  });
});

describe('renderExcept', () => {
  it('keeps expressions whose roots are run-time only', () => {
    const r = renderExcept('echo {{Target}} {{ later.x }}', vars, (root) => root === 'later');
    expect(r).toEqual({ text: 'echo example.com {{ later.x }}', kept: true });
    expect(renderExcept('echo {{Target}}', vars, () => false)).toEqual({ text: 'echo example.com', kept: false });
  });
});

describe('referencedVariables / valueToString', () => {
  it('lists root names from {{ }} and [[ ]] once, in order', () => {
    expect(referencedVariables('{{ a.b }} {{c}} [[ d ]] {{ a }} {{ e | default:f }} [[ -f x ]]')).toEqual(['a', 'c', 'd', 'e', 'f']);
    expect(referencedVariables('no templates')).toEqual([]);
    expect(referencedVariables('{{ broken')).toEqual([]);
  });

  it('converts values to strings', () => {
    expect(valueToString(undefined)).toBe('');
    expect(valueToString(null)).toBe('');
    expect(valueToString(true)).toBe('true');
    expect(valueToString(0)).toBe('0');
    expect(valueToString({ a: 1 })).toBe('{"a":1}');
    expect(valueToString('s')).toBe('s');
  });
});

describe('properties', () => {
  it('a substituted value is never rendered again, whatever it contains', async () => {
    const fc = (await import('fast-check')).default;
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(render('{{v}}', { v: s, Target: 'T' })).toBe(fixDanglingOperators(s));
      }),
      { numRuns: 300 },
    );
  });
});
