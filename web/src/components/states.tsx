/** The three states every data view has besides its data: loading, error and empty. */
import type { ComponentChildren } from 'preact';
import { ApiError } from '../lib/api.js';

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="state loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> {what}…
    </p>
  );
}

/** An error as the server worded it; a 403 says which role is needed. */
export function ErrorBox({ error, retry }: { error: Error; retry?: () => void }) {
  const status = error instanceof ApiError ? error.status : 0;
  return (
    <div class="state error" role="alert">
      <strong>{status === 403 ? 'Not allowed' : status === 0 ? 'Cannot reach the server' : 'Something went wrong'}</strong>
      <span>{error.message}</span>
      {retry && (
        <button type="button" class="btn small" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

/** Renders loading/error/empty or the children with the data. */
export function Loaded<T>(props: { data: T | undefined; error?: Error; loading: boolean; retry?: () => void; empty?: (d: T) => boolean; emptyText?: ComponentChildren; children: (d: T) => ComponentChildren }) {
  const { data, error, loading, retry, empty, emptyText, children } = props;
  if (error && data === undefined) return <ErrorBox error={error} retry={retry} />;
  if (data === undefined) return loading ? <Loading /> : null;
  return (
    <>
      {error && <ErrorBox error={error} retry={retry} />}
      {empty && empty(data) ? <Empty>{emptyText ?? 'Nothing here yet.'}</Empty> : children(data)}
    </>
  );
}
