/**
 * Settings: the settings file as the server shows it (secrets replaced by [REDACTED]; a redacted
 * value saved back keeps the real secret), checked before saving, with any error at its line.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, apiText } from '../lib/api.js';
import { can } from '../lib/auth.js';
import { useApi } from '../lib/use-api.js';
import { Time } from '../components/bits.js';
import { Empty, ErrorBox, Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import type { YamlProblem } from '../lib/yaml-check.js';

const checker = () => import('../lib/yaml-check.js');

function Editor({ initial, onSaved }: { initial: string; onSaved: () => void }) {
  const [text, setText] = useState(initial);
  const [problems, setProblems] = useState<YamlProblem[]>([]);
  const [state, setState] = useState<'idle' | 'checking' | 'valid' | 'saving' | 'saved'>('idle');
  const [error, setError] = useState<Error | undefined>();
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lines = text.split('\n').length;
  const bad = new Set(problems.map((p) => p.line));

  useEffect(() => setText(initial), [initial]);

  const goTo = (line: number) => {
    const el = area.current;
    if (!el || line < 1) return;
    const start = text.split('\n').slice(0, line - 1).join('\n').length + (line > 1 ? 1 : 0);
    el.focus();
    el.setSelectionRange(start, start + (text.split('\n')[line - 1]?.length ?? 0));
    el.scrollTop = Math.max(0, (line - 5) * 20);
  };

  const validate = async (): Promise<boolean> => {
    setState('checking');
    setError(undefined);
    const { syntaxProblems } = await checker();
    const found = syntaxProblems(text);
    setProblems(found);
    setState(found.length ? 'idle' : 'valid');
    if (found.length) goTo(found[0]!.line);
    return found.length === 0;
  };

  const save = async () => {
    if (!(await validate())) return;
    setState('saving');
    try {
      await api('/osm/api/settings/yaml', { method: 'PUT', body: text, contentType: 'text/yaml' });
      setState('saved');
      setProblems([]);
      onSaved();
    } catch (err) {
      const { placeServerMessage } = await checker();
      const placed = placeServerMessage(text, (err as Error).message);
      setProblems([placed]);
      setError(err as Error);
      setState('idle');
      if (placed.line) goTo(placed.line);
    }
  };

  return (
    <div class="editor-wrap">
      <div class="editor">
        <div class="gutter" ref={gutter} aria-hidden="true">
          {Array.from({ length: lines }, (_, i) => (
            <div class={bad.has(i + 1) ? 'bad' : undefined}>{i + 1}</div>
          ))}
        </div>
        <textarea
          ref={area}
          aria-label="Settings YAML"
          spellcheck={false}
          wrap="off"
          value={text}
          onInput={(e) => {
            setText((e.target as HTMLTextAreaElement).value);
            if (state !== 'idle') setState('idle');
          }}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = (e.target as HTMLTextAreaElement).scrollTop;
          }}
        />
      </div>
      {problems.length > 0 && (
        <ul class="problems" role="alert">
          {problems.map((p) => (
            <li>
              {p.line ? (
                <button type="button" class="link" onClick={() => goTo(p.line)}>
                  Line {p.line}
                </button>
              ) : null}{' '}
              {p.message}
            </li>
          ))}
        </ul>
      )}
      {error && problems.length === 0 && <ErrorBox error={error} />}
      <div class="actions">
        <span class="muted small" role="status">
          {state === 'valid' ? 'The YAML is well-formed.' : state === 'saved' ? 'Saved and reloaded.' : state === 'checking' ? 'Checking…' : state === 'saving' ? 'Saving…' : ''}
        </span>
        <button type="button" class="btn" onClick={() => void validate()}>
          Validate
        </button>
        <button type="button" class="btn primary" onClick={() => void save()} disabled={state === 'saving'}>
          Save
        </button>
      </div>
    </div>
  );
}

export function SettingsPage() {
  const admin = can('admin');
  const yaml = useApi((signal) => (admin ? apiText('/osm/api/settings/yaml', { signal }) : Promise.resolve('')), [admin]);
  const status = useApi((signal) => (admin ? api<{ path: string; last_reload: string; is_watching: boolean; error: string }>('/osm/api/settings/status', { signal }) : Promise.resolve(undefined)), [admin]);
  if (!admin) {
    return (
      <section>
        <PageHead title="Settings" />
        <Empty>The settings hold every secret of the server: only the admin role can see and change them.</Empty>
      </section>
    );
  }
  return (
    <section>
      <PageHead title="Settings" />
      {status.data && (
        <p class="muted small">
          {status.data.path} · last reload <Time value={status.data.last_reload} /> · {status.data.is_watching ? 'reloads on change' : 'not watched'}
          {status.data.error ? <span class="error-text"> · {status.data.error}</span> : null}
        </p>
      )}
      <p class="muted small">Secrets show as [REDACTED]; leave them so to keep the current value, or type a new one.</p>
      {status.error && <ErrorBox error={status.error} />}
      <Loaded data={yaml.data} error={yaml.error} loading={yaml.loading} retry={yaml.reload}>
        {(text) => (
          <Editor
            initial={text}
            onSaved={() => {
              yaml.reload();
              status.reload();
            }}
          />
        )}
      </Loaded>
    </section>
  );
}
