import { useMemo } from "react";
import { ReactFlow, Background, Controls, Position, type Node, type Edge } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { layoutPlan, nodeWidth } from "./layout";

export type DagNode = { key: string; title: string };
export type DagEdge = { from: string; to: string };
// Mark is how a node is drawn: its run status (live), or its place in a
// diff (added, removed, changed).
export type Mark = { status?: string; diff?: "added" | "removed" | "changed"; note?: string };

// Dag draws a plan's DAG left to right. The layout is computed once per
// layoutKey (a plan and its revision): marks only recolour and annotate.
export function Dag({ layoutKey, nodes, edges, marks, edgeMark, onSelect, label, height = 480 }: {
  layoutKey: string; nodes: DagNode[]; edges: DagEdge[]; marks: (key: string) => Mark | undefined;
  edgeMark?: (e: DagEdge) => "added" | "removed" | undefined;
  onSelect?: (key: string) => void; label: string; height?: number;
}) {
  const placed = useMemo(() => layoutPlan(nodes, edges), [layoutKey]); // eslint-disable-line react-hooks/exhaustive-deps
  const drawn: Node[] = nodes.map((n) => {
    const m = marks(n.key);
    const s = (m?.status ?? "PENDING").toLowerCase();
    const classes = ["dag-node", `status-${s}`];
    if (m?.diff) classes.push(`diff-${m.diff}`);
    return {
      id: n.key,
      position: placed.get(n.key) ?? { x: 0, y: 0 },
      sourcePosition: Position.Right,
      targetPosition: Position.Left,
      data: { label: m?.note ? `${n.title} (${m.note})` : n.title },
      style: { width: nodeWidth },
      ariaLabel: `${n.title} (${n.key}): ${m?.diff ?? s.replace(/_/g, " ")}${m?.note ? `, ${m.note}` : ""}`,
      className: classes.join(" "),
    };
  });
  const lines: Edge[] = edges.map((e) => {
    const m = edgeMark?.(e);
    return { id: `${e.from}->${e.to}`, source: e.from, target: e.to, className: m ? `diff-${m}` : undefined, animated: m === "added" };
  });
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
