/**
 * A run's log as selectable text that grows while the run runs. Lines are appended to the DOM
 * as text nodes in animation-frame batches (a chatty tool must not re-render the page per
 * line); follow keeps the newest line in view, pause holds new lines back, search filters, and
 * download saves what arrived. Tool output is hostile data: it is only ever a text node.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { saveBlob } from '../lib/api.js';

export interface LogLine {
  step: string;
  stream: 'stdout' | 'stderr' | 'info';
  line: string;
  ts?: string;
}

/** What the log view is fed: lines pushed in from outside (a stream or polling). */
export class LogBuffer {
  lines: LogLine[] = [];
  private subs = new Set<(added: LogLine[], reset: boolean) => void>();
  /** Lines kept in memory at most (the oldest are dropped; the download says so). */
  static readonly MAX = 200_000;
  dropped = 0;

  push(added: LogLine[]): void {
    if (!added.length) return;
    this.lines.push(...added);
    if (this.lines.length > LogBuffer.MAX) {
      const n = this.lines.length - LogBuffer.MAX;
      this.lines.splice(0, n);
      this.dropped += n;
    }
    for (const fn of this.subs) fn(added, false);
  }

  reset(lines: LogLine[] = []): void {
    this.lines = lines.slice(-LogBuffer.MAX);
    for (const fn of this.subs) fn(this.lines, true);
  }

  subscribe(fn: (added: LogLine[], reset: boolean) => void): () => void {
    this.subs.add(fn);
    return () => void this.subs.delete(fn);
  }
}

function lineNode(l: LogLine, showStep: boolean): HTMLElement {
  const row = document.createElement('div');
  row.className = l.stream === 'stderr' ? 'log-line err' : l.stream === 'info' ? 'log-line info' : 'log-line';
  if (showStep && l.step) {
    const s = document.createElement('span');
    s.className = 'log-step';
    s.textContent = l.step;
    row.append(s);
  }
  row.append(document.createTextNode(l.line));
  return row;
}

export function LogView({ buffer, steps, fileName, live }: { buffer: LogBuffer; steps: string[]; fileName: string; live: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  const [paused, setPaused] = useState(false);
  const [search, setSearch] = useState('');
  const [step, setStep] = useState('');
  const [shown, setShown] = useState(0);
  const [held, setHeld] = useState(0);
  const state = useRef({ follow, paused, search, step, pending: [] as LogLine[], heldLines: [] as LogLine[], frame: 0 });
  state.current.follow = follow;

  const matches = (l: LogLine) => {
    const s = state.current;
    return (!s.step || l.step === s.step) && (!s.search || l.line.toLowerCase().includes(s.search.toLowerCase()));
  };

  const flush = () => {
    const s = state.current;
    s.frame = 0;
    const el = box.current;
    if (!el || !s.pending.length) return;
    const frag = document.createDocumentFragment();
    let n = 0;
    for (const l of s.pending) {
      if (!matches(l)) continue;
      frag.append(lineNode(l, !s.step));
      n++;
    }
    s.pending = [];
    el.append(frag);
    setShown((x) => x + n);
    if (s.follow) el.scrollTop = el.scrollHeight;
  };

  const rebuild = () => {
    const el = box.current;
    if (!el) return;
    el.textContent = '';
    const s = state.current;
    s.pending = buffer.lines.slice(0, buffer.lines.length - s.heldLines.length);
    setShown(0);
    flush();
  };

  useEffect(() => {
    rebuild();
    return buffer.subscribe((added, reset) => {
      const s = state.current;
      if (reset) {
        s.heldLines = [];
        setHeld(0);
        rebuild();
        return;
      }
      if (s.paused) {
        s.heldLines.push(...added);
        setHeld(s.heldLines.length);
        return;
      }
      s.pending.push(...added);
      if (!s.frame) s.frame = requestAnimationFrame(flush);
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [buffer]);

  const applyFilter = (next: { search?: string; step?: string }) => {
    Object.assign(state.current, next);
    if (next.search !== undefined) setSearch(next.search);
    if (next.step !== undefined) setStep(next.step);
    rebuild();
  };

  const togglePause = () => {
    const s = state.current;
    s.paused = !s.paused;
    setPaused(s.paused);
    if (!s.paused && s.heldLines.length) {
      s.pending.push(...s.heldLines);
      s.heldLines = [];
      setHeld(0);
      flush();
    }
  };

  const download = () => {
    const text = buffer.lines.map((l) => (l.step ? `[${l.step}] ${l.line}` : l.line)).join('\n');
    saveBlob(new Blob([text + '\n'], { type: 'text/plain' }), fileName);
  };

  return (
    <section class="log" aria-label="Log">
      <div class="log-tools">
        <label class="inline">
          Step{' '}
          <select value={step} onChange={(e) => applyFilter({ step: (e.target as HTMLSelectElement).value })}>
            <option value="">All steps</option>
            {steps.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <input type="search" placeholder="Search" aria-label="Search the log" value={search} onInput={(e) => applyFilter({ search: (e.target as HTMLInputElement).value })} />
        <label class="inline">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} /> Follow
        </label>
        <button type="button" class="btn small" onClick={togglePause} aria-pressed={paused}>
          {paused ? `Resume${held ? ` (${held} new)` : ''}` : 'Pause'}
        </button>
        <button type="button" class="btn small" onClick={download}>
          Download
        </button>
        <span class="muted small" aria-live="polite">
          {shown} line{shown === 1 ? '' : 's'}
          {live ? ' · live' : ''}
        </span>
      </div>
      <div ref={box} class="log-lines" tabIndex={0} role="log" aria-label="Log lines" data-testid="log-lines" />
      {shown === 0 && <p class="muted small log-empty">{search || step ? 'No line matches.' : live ? 'Waiting for output…' : 'No output.'}</p>}
    </section>
  );
}
