/** Server-side pagination: "1–20 of 1,234" with previous/next and a page size. */
import { count } from '../lib/format.js';

export function Pager(props: { offset: number; limit: number; total: number; onOffset: (o: number) => void; onLimit?: (l: number) => void; busy?: boolean }) {
  const { offset, limit, total } = props;
  const from = total === 0 ? 0 : offset + 1;
  const to = Math.min(offset + limit, total);
  const last = Math.max(0, Math.floor((total - 1) / limit) * limit);
  return (
    <nav class="pager" aria-label="Pages">
      <span class="pager-text" aria-live="polite">
        {count(from)}–{count(to)} of {count(total)}
      </span>
      <button type="button" class="btn small" disabled={offset <= 0 || props.busy} onClick={() => props.onOffset(0)} aria-label="First page">
        «
      </button>
      <button type="button" class="btn small" disabled={offset <= 0 || props.busy} onClick={() => props.onOffset(Math.max(0, offset - limit))}>
        Previous
      </button>
      <button type="button" class="btn small" disabled={to >= total || props.busy} onClick={() => props.onOffset(offset + limit)}>
        Next
      </button>
      <button type="button" class="btn small" disabled={to >= total || props.busy} onClick={() => props.onOffset(last)} aria-label="Last page">
        »
      </button>
      {props.onLimit && (
        <label class="inline">
          Per page{' '}
          <select value={String(limit)} onChange={(e) => props.onLimit!(Number((e.target as HTMLSelectElement).value))}>
            {[20, 50, 100, 200].map((n) => (
              <option value={String(n)}>{n}</option>
            ))}
          </select>
        </label>
      )}
    </nav>
  );
}
