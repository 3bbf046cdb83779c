/**
 * Artifacts with preview and download. Files are fetched through the authenticated API (the
 * server marks them sandboxed and never sniffed); a preview shows text as text and images as
 * images — an HTML report is shown as its source, never rendered in this origin.
 */
import { useEffect, useState } from 'preact/hooks';
import { request, withQuery } from '../lib/api.js';
import { bytes, count } from '../lib/format.js';
import { Time } from '../components/bits.js';
import { ErrorBox, Loading } from '../components/states.js';
import type { Artifact } from '../types.js';

const PREVIEW_BYTES = 512 * 1024;
const IMAGE = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp']);

/** The API URL of one workspace file. */
export function fileUrl(workspace: string, path: string): string {
  return withQuery(`/osm/api/artifacts/${encodeURIComponent(workspace)}`, { artifact_path: path });
}

function Preview({ a }: { a: Artifact }) {
  const [state, setState] = useState<{ text?: string; error?: Error; truncated?: boolean }>({});
  const url = fileUrl(a.workspace, a.artifact_path);
  const textual = !IMAGE.has(a.content_type) && !['folder', 'zip', 'pdf'].includes(a.content_type);
  useEffect(() => {
    if (!textual) return;
    const ctl = new AbortController();
    void (async () => {
      try {
        const res = await request(url, { signal: ctl.signal });
        const reader = res.body!.getReader();
        const chunks: Uint8Array[] = [];
        let size = 0;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          chunks.push(value);
          size += value.length;
          if (size >= PREVIEW_BYTES) {
            void reader.cancel();
            break;
          }
        }
        const all = new Uint8Array(size);
        let o = 0;
        for (const c of chunks) {
          all.set(c, o);
          o += c.length;
        }
        const text = new TextDecoder().decode(all.subarray(0, PREVIEW_BYTES));
        setState({ text, truncated: size >= PREVIEW_BYTES });
      } catch (err) {
        if (!ctl.signal.aborted) setState({ error: err as Error });
      }
    })();
    return () => ctl.abort();
  }, [url, textual]);
  if (IMAGE.has(a.content_type)) return <img class="preview-img" src={url} alt={a.name} />;
  if (!textual) return <p class="muted">No preview for {a.content_type} files; download it.</p>;
  if (state.error) return <ErrorBox error={state.error} />;
  if (state.text === undefined) return <Loading what="Loading preview" />;
  return (
    <>
      <pre class="preview" tabIndex={0}>
        {state.text || '(empty file)'}
      </pre>
      {state.truncated && <p class="muted small">Preview cut at {bytes(PREVIEW_BYTES)}; download for the whole file.</p>}
    </>
  );
}

export function ArtifactList({ artifacts }: { artifacts: Artifact[] }) {
  const [open, setOpen] = useState<string | undefined>();
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Type</th>
            <th>Size</th>
            <th>Lines</th>
            <th>Created</th>
            <th>
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {artifacts.map((a) => (
            <>
              <tr key={a.id}>
                <td class="wrap">
                  {a.name}
                  <div class="muted small mono wrap">{a.artifact_path}</div>
                </td>
                <td>
                  {a.artifact_type} <span class="muted small">{a.content_type}</span>
                </td>
                <td>{bytes(a.size_bytes)}</td>
                <td>{count(a.line_count)}</td>
                <td>
                  <Time value={a.created_at} />
                </td>
                <td class="nowrap">
                  {a.content_type !== 'folder' && (
                    <button type="button" class="btn small" aria-expanded={open === a.id} onClick={() => setOpen(open === a.id ? undefined : a.id)}>
                      {open === a.id ? 'Hide' : 'Preview'}
                    </button>
                  )}{' '}
                  {a.content_type !== 'folder' && (
                    <a class="btn small" href={fileUrl(a.workspace, a.artifact_path)} download={a.artifact_path.split('/').pop() || a.name}>
                      Download
                    </a>
                  )}
                </td>
              </tr>
              {open === a.id && (
                <tr class="preview-row">
                  <td colSpan={6}>
                    <Preview a={a} />
                  </td>
                </tr>
              )}
            </>
          ))}
        </tbody>
      </table>
    </div>
  );
}
