/** One workflow: params, steps or modules as a graph, triggers, and its YAML with lint messages at their lines. */
import { api, apiText } from '../lib/api.js';
import { can } from '../lib/auth.js';
import { useApi } from '../lib/use-api.js';
import { seg } from '../lib/router.js';
import { Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import { Graph, type GraphNode } from '../components/graph.js';
import { CodeLines } from '../components/code-lines.js';
import type { LintIssue, WorkflowDetail } from '../types.js';

/** Graph nodes: a flow's modules (by depends_on), or a module's steps (in order unless depends_on). */
export function graphNodes(w: WorkflowDetail): GraphNode[] {
  if (w.kind === 'flow') return w.modules.map((m) => ({ id: m.name, label: m.name, sub: m.condition ? `if ${m.condition}` : m.path, deps: m.depends_on ?? [] }));
  return w.steps.map((s, i) => ({
    id: s.name,
    label: s.name,
    sub: s.parallel_steps?.length ? `${s.type} ×${s.parallel_steps.length}` : s.type,
    deps: s.depends_on?.length ? s.depends_on : i > 0 ? [w.steps[i - 1]!.name] : [],
  }));
}

export function WorkflowPage({ name }: { name: string }) {
  const detail = useApi((signal) => api<WorkflowDetail>(`/osm/api/workflows/${seg(name)}`, { query: { json: true }, signal }), [name]);
  const yaml = useApi((signal) => apiText(`/osm/api/workflows/${seg(name)}`, { signal }), [name]);
  const lint = useApi((signal) => api<{ data: { issues: LintIssue[]; errors: number; warnings: number } }>(`/osm/api/workflows/${seg(name)}/lint`, { signal }), [name]);
  return (
    <Loaded data={detail.data} error={detail.error} loading={detail.loading} retry={detail.reload}>
      {(w) => (
        <section>
          <PageHead title={w.name}>
            {can('operator') && (
              <a class="btn primary" href={`/runs/new?workflow=${encodeURIComponent(w.name)}`}>
                Run it
              </a>
            )}
          </PageHead>
          <p>
            <span class="tag">{w.kind}</span> {w.description}
          </p>
          <p>
            {w.tags.map((t) => (
              <a class="tag" href={`/workflows?tag=${encodeURIComponent(t)}`}>
                {t}
              </a>
            ))}
          </p>
          <h2>{w.kind === 'flow' ? `Modules ${w.modules.length}` : `Steps ${w.steps.length}`}</h2>
          <Graph nodes={graphNodes(w)} label={w.kind === 'flow' ? 'Modules graph' : 'Steps graph'} />
          <h2>Parameters {w.params.length}</h2>
          {w.params.length === 0 ? (
            <p class="muted">No parameters.</p>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Default</th>
                    <th>Required</th>
                  </tr>
                </thead>
                <tbody>
                  {w.params.map((p) => (
                    <tr>
                      <td class="mono">{p.name}</td>
                      <td class="mono wrap">{p.default || <span class="muted">none</span>}</td>
                      <td>{w.required_params.includes(p.name) ? 'yes' : 'no'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {w.triggers.length > 0 && (
            <>
              <h2>Triggers {w.triggers.length}</h2>
              <ul>
                {w.triggers.map((t) => (
                  <li>
                    {t.name}: {t.on} {t.schedule || t.topic} {t.enabled ? '(enabled)' : '(disabled)'}
                  </li>
                ))}
              </ul>
            </>
          )}
          {(w.dependencies.commands.length > 0 || w.dependencies.files.length > 0) && (
            <p class="muted small">Needs: {[...w.dependencies.commands, ...w.dependencies.files].join(', ')}</p>
          )}
          <h2>YAML</h2>
          {lint.data && (
            <p class={lint.data.data.errors ? 'error-text' : 'muted'}>
              Lint: {lint.data.data.errors} error{lint.data.data.errors === 1 ? '' : 's'}, {lint.data.data.warnings} warning{lint.data.data.warnings === 1 ? '' : 's'}
            </p>
          )}
          <Loaded data={yaml.data} error={yaml.error} loading={yaml.loading} retry={yaml.reload}>
            {(text) => <CodeLines text={text} label="Workflow YAML" messages={(lint.data?.data.issues ?? []).map((i) => ({ line: i.line ?? 0, severity: i.severity, message: `${i.path ? `${i.path}: ` : ''}${i.message}${i.rule ? ` [${i.rule}]` : ''}` }))} />}
          </Loaded>
        </section>
      )}
    </Loaded>
  );
}
