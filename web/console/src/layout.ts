import dagre from "@dagrejs/dagre";

export type Placed = { x: number; y: number };

export const nodeWidth = 180;
export const nodeHeight = 44;

// layoutPlan places a plan's nodes left to right with dagre, once per
// revision: events only recolour and annotate what is placed here.
export function layoutPlan(nodes: { key: string }[], edges: { from: string; to: string }[]): Map<string, Placed> {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "LR", nodesep: 24, ranksep: 56, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.key, { width: nodeWidth, height: nodeHeight });
  for (const e of edges) if (g.hasNode(e.from) && g.hasNode(e.to)) g.setEdge(e.from, e.to);
  dagre.layout(g);
  const out = new Map<string, Placed>();
  for (const n of nodes) {
    const p = g.node(n.key);
    out.set(n.key, { x: p.x - nodeWidth / 2, y: p.y - nodeHeight / 2 });
  }
  return out;
}
