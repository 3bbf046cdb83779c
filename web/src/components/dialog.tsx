/** A confirmation dialog on the native <dialog> (focus kept inside, Escape cancels). */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function ConfirmDialog(props: { open: boolean; title: string; children?: ComponentChildren; confirmLabel: string; danger?: boolean; busy?: boolean; onConfirm: () => void; onCancel: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby="dialog-title" onCancel={(e) => (e.preventDefault(), props.onCancel())}>
      <form method="dialog" onSubmit={(e) => (e.preventDefault(), props.onConfirm())}>
        <h2 id="dialog-title">{props.title}</h2>
        <div class="dialog-body">{props.children}</div>
        <div class="actions">
          <button type="button" class="btn" onClick={props.onCancel} autofocus>
            Keep it
          </button>
          <button type="submit" class={`btn ${props.danger ? 'danger' : 'primary'}`} disabled={props.busy}>
            {props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
