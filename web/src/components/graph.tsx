/**
 * A workflow as a graph in SVG: nodes in columns by dependency depth (a flow's modules by
 * depends_on; a module's steps in order unless they declare depends_on), edges between them.
 */

export interface GraphNode {
  id: string;
  label: string;
  sub?: string;
  deps: string[];
}

/** Depth of each node: 0 for roots, else 1 + the deepest dependency (cycles are cut). */
export function layers(nodes: GraphNode[]): Map<string, number> {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const visit = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0;
    visiting.add(id);
    const n = byId.get(id);
    const d = n && n.deps.length ? 1 + Math.max(...n.deps.filter((x) => byId.has(x)).map(visit), -1) : 0;
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const n of nodes) visit(n.id);
  return depth;
}

export function Graph({ nodes, label }: { nodes: GraphNode[]; label: string }) {
  if (!nodes.length) return <p class="muted">No steps.</p>;
  const depth = layers(nodes);
  const cols: GraphNode[][] = [];
  for (const n of nodes) (cols[depth.get(n.id) ?? 0] ??= []).push(n);
  const NW = 170;
  const NH = 44;
  const GX = 48;
  const GY = 16;
  const pos = new Map<string, { x: number; y: number }>();
  cols.forEach((col, c) => col.forEach((n, r) => pos.set(n.id, { x: 10 + c * (NW + GX), y: 10 + r * (NH + GY) })));
  const W = 20 + cols.length * (NW + GX) - GX;
  const H = 20 + Math.max(...cols.map((c) => c.length)) * (NH + GY) - GY;
  const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
  return (
    <div class="graph" role="region" aria-label={label} tabIndex={0}>
      <svg width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${label}: ${nodes.length} nodes`}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" class="edge-head" />
          </marker>
        </defs>
        {nodes.flatMap((n) =>
          n.deps
            .filter((d) => pos.has(d))
            .map((d) => {
              const a = pos.get(d)!;
              const b = pos.get(n.id)!;
              const x1 = a.x + NW;
              const y1 = a.y + NH / 2;
              const x2 = b.x;
              const y2 = b.y + NH / 2;
              const mx = (x1 + x2) / 2;
              return <path class="edge" d={`M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`} marker-end="url(#arrow)" />;
            }),
        )}
        {nodes.map((n) => {
          const p = pos.get(n.id)!;
          return (
            <g transform={`translate(${p.x},${p.y})`}>
              <rect class="node" width={NW} height={NH} rx="6" />
              <text class="node-label" x="10" y="18">
                {clip(n.label, 22)}
              </text>
              {n.sub && (
                <text class="node-sub" x="10" y="34">
                  {clip(n.sub, 26)}
                </text>
              )}
              <title>{n.sub ? `${n.label} (${n.sub})` : n.label}</title>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
