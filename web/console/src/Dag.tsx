import { useMemo, useRef } from "react";
import { ReactFlow, Background, Controls, Position, type Node, type Edge } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { layoutPlan, nodeHeight, nodeWidth } from "./layout";

export type DagNode = { key: string; title: string };
export type DagEdge = { from: string; to: string };
// Mark is how a node is drawn: its run status (live), or its place in a
// diff (added, removed, changed).
export type Mark = { status?: string; diff?: "added" | "removed" | "changed"; note?: string };

// Dag draws a plan's DAG left to right. The layout is computed once per
// shape (layoutKey, the node keys and the edges): marks only recolour and
// annotate.
export function Dag({ layoutKey, nodes, edges, marks, edgeMark, onSelect, label, height = 480 }: {
  layoutKey: string; nodes: DagNode[]; edges: DagEdge[]; marks: (key: string) => Mark | undefined;
  edgeMark?: (e: DagEdge) => "added" | "removed" | undefined;
  onSelect?: (key: string) => void; label: string; height?: number;
}) {
  // The layout follows the graph's shape, not its props' identity: a new
  // revision (or a cache update that brings its nodes after its number)
  // lays out again; a recolour never does.
  const shape = `${layoutKey}|${nodes.map((n) => n.key).join(",")}|${edges.map((e) => `${e.from}>${e.to}`).join(",")}`;
  const placed = useMemo(() => layoutPlan(nodes, edges), [shape]); // eslint-disable-line react-hooks/exhaustive-deps
  // One node object per key and look: React Flow re-renders only the
  // nodes whose status or diff changed, not all five hundred per event.
  const made = useRef(new Map<string, { look: string; node: Node }>());
  const drawn: Node[] = nodes.map((n) => {
    const m = marks(n.key);
    const s = (m?.status ?? "PENDING").toLowerCase();
    const p = placed.get(n.key) ?? { x: 0, y: 0 };
    const look = `${s}|${m?.diff ?? ""}|${m?.note ?? ""}|${n.title}|${p.x},${p.y}`;
    const known = made.current.get(n.key);
    if (known && known.look === look) return known.node;
    const classes = ["dag-node", `status-${s}`];
    if (m?.diff) classes.push(`diff-${m.diff}`);
    const node: Node = {
      id: n.key,
      position: p,
      // Known dimensions: React Flow draws each node at once instead of
      // hiding it until it is measured.
      width: nodeWidth,
      height: nodeHeight,
      sourcePosition: Position.Right,
      targetPosition: Position.Left,
      data: { label: m?.note ? `${n.title} (${m.note})` : n.title },
      ariaLabel: `${n.title} (${n.key}): ${m?.diff ?? s.replace(/_/g, " ")}${m?.note ? `, ${m.note}` : ""}`,
      className: classes.join(" "),
    };
    made.current.set(n.key, { look, node });
    return node;
  });
  const lines: Edge[] = useMemo(() => edges.map((e) => {
    const m = edgeMark?.(e);
    return { id: `${e.from}->${e.to}`, source: e.from, target: e.to, className: m ? `diff-${m}` : undefined, animated: m === "added" };
  }), [shape]); // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <div className="dag" style={{ height }} role="group" aria-label={label}
      onKeyDownCapture={(e) => {
        // Keyboard: Tab reaches each node, Enter opens it (captured before
        // React Flow's own key handling).
        const id = (e.target as HTMLElement).closest?.(".react-flow__node")?.getAttribute("data-id");
        if (id && e.key === "Enter") onSelect?.(id);
      }}>
      <ReactFlow nodes={drawn} edges={lines} fitView minZoom={0.05} nodesDraggable={false} nodesConnectable={false}
        proOptions={{ hideAttribution: true }} onNodeClick={(_, n) => onSelect?.(n.id)}
        onNodesChange={() => {}}>
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
