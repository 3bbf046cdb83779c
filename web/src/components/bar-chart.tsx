/** A per-day bar chart in plain SVG (no chart library): stacked series, labelled axis, a table twin for screen readers. */
import { count } from '../lib/format.js';

export interface Series {
  name: string;
  /** CSS class giving the colour. */
  cls: string;
  values: number[];
}

export function BarChart({ title, days, series }: { title: string; days: string[]; series: Series[] }) {
  const W = 560;
  const H = 160;
  const pad = { l: 32, r: 8, t: 10, b: 22 };
  const totals = days.map((_, i) => series.reduce((n, s) => n + (s.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const bw = (W - pad.l - pad.r) / Math.max(1, days.length);
  const y = (v: number) => pad.t + (H - pad.t - pad.b) * (1 - v / max);
  const ticks = [0, Math.ceil(max / 2), max];
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${count(totals.reduce((a, b) => a + b, 0))} in ${days.length} days`} preserveAspectRatio="none">
        {ticks.map((t) => (
          <g>
            <line class="grid" x1={pad.l} x2={W - pad.r} y1={y(t)} y2={y(t)} />
            <text class="axis" x={pad.l - 4} y={y(t) + 3} text-anchor="end">
              {t}
            </text>
          </g>
        ))}
        {days.map((d, i) => {
          let base = 0;
          return (
            <g>
              {series.map((s) => {
                const v = s.values[i] ?? 0;
                if (!v) return null;
                const top = y(base + v);
                const h = y(base) - top;
                base += v;
                return (
                  <rect class={s.cls} x={pad.l + i * bw + 1} y={top} width={Math.max(1, bw - 2)} height={h}>
                    <title>{`${d} · ${s.name}: ${v}`}</title>
                  </rect>
                );
              })}
              {(i % Math.ceil(days.length / 7) === 0 || i === days.length - 1) && (
                <text class="axis" x={pad.l + i * bw + bw / 2} y={H - 6} text-anchor="middle">
                  {d.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <div class="legend">
        {series.map((s) => (
          <span>
            <i class={`swatch ${s.cls}`} aria-hidden="true" /> {s.name} {count(s.values.reduce((a, b) => a + b, 0))}
          </span>
        ))}
      </div>
    </figure>
  );
}
