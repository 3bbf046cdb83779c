/** One finding with its evidence: description, proof of concept, HTTP request and response, raw JSON (all as text). */
import { useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { can } from '../lib/auth.js';
import { useApi } from '../lib/use-api.js';
import { navigate, seg } from '../lib/router.js';
import { Severity, Time } from '../components/bits.js';
import { ConfirmDialog } from '../components/dialog.js';
import { ErrorBox, Loaded } from '../components/states.js';
import { PageHead } from '../components/layout.js';
import type { Vuln } from '../types.js';

function Block({ title, text }: { title: string; text: string }) {
  if (!text) return null;
  return (
    <>
      <h2>{title}</h2>
      <pre class="preview" tabIndex={0}>
        {text}
      </pre>
    </>
  );
}

function pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

export function VulnPage({ id }: { id: string }) {
  const v = useApi((signal) => api<{ data: Vuln }>(`/osm/api/vulnerabilities/${seg(id)}`, { signal }), [id]);
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  const remove = async () => {
    try {
      await api(`/osm/api/vulnerabilities/${seg(id)}`, { method: 'DELETE' });
      navigate('/vulnerabilities');
    } catch (err) {
      setError(err as Error);
      setConfirm(false);
    }
  };
  return (
    <Loaded data={v.data} error={v.error} loading={v.loading} retry={v.reload}>
      {({ data: f }) => (
        <section>
          <PageHead title={f.vuln_title || f.vuln_info || `Finding ${f.id}`}>
            {can('operator') && (
              <button type="button" class="btn danger" onClick={() => setConfirm(true)}>
                Delete
              </button>
            )}
          </PageHead>
          {error && <ErrorBox error={error} />}
          <ConfirmDialog open={confirm} title="Delete this finding?" confirmLabel="Delete" danger onConfirm={() => void remove()} onCancel={() => setConfirm(false)}>
            <p>It is removed from the workspace for good.</p>
          </ConfirmDialog>
          <dl class="facts">
            <dt>Severity</dt>
            <dd>
              <Severity value={f.severity} />
            </dd>
            <dt>Confidence</dt>
            <dd>{f.confidence}</dd>
            <dt>Asset</dt>
            <dd class="mono wrap">{f.asset_value}</dd>
            <dt>Identifier</dt>
            <dd class="mono">{f.vuln_info || '—'}</dd>
            <dt>Workspace</dt>
            <dd>
              <a href={`/workspaces/${seg(f.workspace)}`}>{f.workspace}</a>
            </dd>
            <dt>Found</dt>
            <dd>
              <Time value={f.created_at} />
            </dd>
            <dt>Tags</dt>
            <dd>{(f.tags ?? []).length ? f.tags.map((t) => <span class="tag">{t}</span>) : '—'}</dd>
          </dl>
          <Block title="Description" text={f.vuln_desc} />
          <Block title="Proof of concept" text={f.vuln_poc} />
          <Block title="HTTP request" text={f.detail_http_request} />
          <Block title="HTTP response" text={f.detail_http_response} />
          <Block title="Raw JSON" text={pretty(f.raw_vuln_json)} />
        </section>
      )}
    </Loaded>
  );
}
