/**
 * New run: a flow or module, its declared params as fields with their defaults, targets typed
 * (one per line) or uploaded as a file, priority and concurrency.
 */
import { useId, useMemo, useState } from 'preact/hooks';
import { api, type List } from '../lib/api.js';
import { useApi } from '../lib/use-api.js';
import { navigate, seg } from '../lib/router.js';
import { Loaded, ErrorBox } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import type { Workflow } from '../types.js';

interface RunResponse {
  run_uuid?: string;
  job_id?: string;
  targets?: string[];
  target_count?: number;
}

export function NewRunPage() {
  const id = useId();
  const initial = new URLSearchParams(location.search).get('workflow') ?? '';
  const workflows = useApi((signal) => api<List<Workflow>>('/osm/api/workflows', { query: { limit: 10000 }, signal }), []);
  const [name, setName] = useState(initial);
  const [targets, setTargets] = useState('');
  const [file, setFile] = useState<File | undefined>();
  const [priority, setPriority] = useState('normal');
  const [concurrency, setConcurrency] = useState('1');
  const [params, setParams] = useState<Record<string, string>>({});
  const [error, setError] = useState<Error | undefined>();
  const [busy, setBusy] = useState(false);
  const wf = useMemo(() => workflows.data?.data.find((w) => w.name === name), [workflows.data, name]);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!wf) return setError(new Error('Choose a workflow or module from the list.'));
    setBusy(true);
    setError(undefined);
    try {
      const body: Record<string, unknown> = { [wf.kind === 'flow' ? 'flow' : 'module']: wf.name, priority };
      const list = targets.split('\n').map((t) => t.trim()).filter(Boolean);
      if (file) {
        const form = new FormData();
        form.append('file', file);
        const up = await api<{ path: string }>('/osm/api/upload-file', { method: 'POST', body: form });
        body.target_file = up.path;
      } else if (list.length === 1) body.target = list[0];
      else if (list.length > 1) body.targets = list;
      else throw new Error('Type at least one target or choose a targets file.');
      const c = Number(concurrency);
      if (Number.isInteger(c) && c > 1) body.concurrency = c;
      const changed: Record<string, string> = {};
      for (const p of wf.params) {
        const v = params[p.name];
        if (v !== undefined && v !== p.default) changed[p.name] = v;
      }
      if (Object.keys(changed).length) body.params = changed;
      const res = await api<RunResponse>('/osm/api/runs', { method: 'POST', body });
      if (res.run_uuid) navigate(`/runs/${seg(res.run_uuid)}`);
      else navigate(`/runs?workflow=${encodeURIComponent(wf.name)}`);
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <PageHead title="New run" />
      <Loaded data={workflows.data} error={workflows.error} loading={workflows.loading} retry={workflows.reload} empty={(d) => d.data.length === 0} emptyText="No workflow is installed yet.">
        {(d) => (
          <form class="card form" onSubmit={submit}>
            <div class="field">
              <label for={`${id}-wf`}>Workflow or Module</label>
              <input id={`${id}-wf`} list={`${id}-wfl`} placeholder="Workflow or Module" required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} autoComplete="off" />
              <datalist id={`${id}-wfl`}>
                {d.data.map((w) => (
                  <option value={w.name}>{`${w.kind} · ${w.description}`}</option>
                ))}
              </datalist>
              {wf ? <small class="hint">{`${wf.kind}: ${wf.description || 'no description'} · ${wf.step_count} steps`}</small> : name && <small class="hint">No workflow of that name.</small>}
            </div>
            <div class="field">
              <label for={`${id}-t`}>Target</label>
              <textarea id={`${id}-t`} rows={3} placeholder="Target" value={targets} disabled={Boolean(file)} onInput={(e) => setTargets((e.target as HTMLTextAreaElement).value)} />
              <small class="hint">One target per line; several targets make one run each.</small>
            </div>
            <div class="field">
              <label for={`${id}-f`}>Or a targets file</label>
              <input id={`${id}-f`} type="file" accept=".txt,text/plain" onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0])} />
            </div>
            <div class="row">
              <div class="field">
                <label for={`${id}-p`}>Priority</label>
                <select id={`${id}-p`} value={priority} onChange={(e) => setPriority((e.target as HTMLSelectElement).value)}>
                  {['low', 'normal', 'high', 'critical'].map((p) => (
                    <option value={p}>{p}</option>
                  ))}
                </select>
              </div>
              <div class="field">
                <label for={`${id}-c`}>Concurrency</label>
                <input id={`${id}-c`} type="number" min={1} max={1000} value={concurrency} onInput={(e) => setConcurrency((e.target as HTMLInputElement).value)} />
              </div>
            </div>
            {wf && wf.params.length > 0 && (
              <fieldset>
                <legend>Parameters</legend>
                {wf.params.map((p) => (
                  <div class="field">
                    <label for={`${id}-param-${p.name}`}>
                      {p.name}
                      {p.required ? ' (required)' : ''}
                    </label>
                    <input id={`${id}-param-${p.name}`} value={params[p.name] ?? p.default} required={wf.required_params.includes(p.name)} onInput={(e) => setParams({ ...params, [p.name]: (e.target as HTMLInputElement).value })} />
                  </div>
                ))}
              </fieldset>
            )}
            {error && <ErrorBox error={error} />}
            <div class="actions">
              <button type="submit" class="btn primary" disabled={busy}>
                {busy ? 'Starting…' : 'Start run'}
              </button>
            </div>
          </form>
        )}
      </Loaded>
    </section>
  );
}
