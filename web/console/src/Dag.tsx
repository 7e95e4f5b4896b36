import { memo, useLayoutEffect, useMemo, useState, useSyncExternalStore } from "react";
import { ReactFlow, Background, Controls, Handle, Position, type Node, type NodeProps, type Edge } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { layoutPlan, nodeHeight, nodeWidth } from "./layout";

export type DagNode = { key: string; title: string; simulated?: boolean };
export type DagEdge = { from: string; to: string };
// Mark is how a node is drawn: its run status (live), or its place in a
// diff (added, removed, changed).
export type Mark = { status?: string; diff?: "added" | "removed" | "changed"; note?: string };

// MarkStore holds each node's mark outside React Flow: a live event
// re-renders the one node component whose mark changed, while React Flow's
// nodes (positions, sizes) stay the same objects for the whole revision.
class MarkStore {
  private marks = new Map<string, Mark | undefined>();
  private looks = new Map<string, string>();
  private listeners = new Map<string, Set<() => void>>();

  get = (key: string): Mark | undefined => this.marks.get(key);

  subscribe = (key: string, f: () => void): (() => void) => {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(f);
    return () => { set.delete(f); };
  };

  // update sets every node's mark and tells only the nodes whose look
  // changed.
  update(keys: string[], marks: (key: string) => Mark | undefined) {
    for (const key of keys) {
      const m = marks(key);
      const look = `${m?.status ?? ""}|${m?.diff ?? ""}|${m?.note ?? ""}`;
      if (this.looks.get(key) === look) continue;
      this.looks.set(key, look);
      this.marks.set(key, m);
      this.listeners.get(key)?.forEach((f) => f());
    }
  }
}

type NodeData = { key: string; title: string; simulated?: boolean; store: MarkStore };

// PlanNodeView is one node: its title, and its mark read from the store.
const PlanNodeView = memo(function PlanNodeView({ data }: NodeProps<Node<NodeData>>) {
  const mark = useSyncExternalStore((f) => data.store.subscribe(data.key, f), () => data.store.get(data.key));
  const s = (mark?.status ?? "PENDING").toLowerCase();
  const state = mark?.diff ?? s.replace(/_/g, " ");
  return (
    <div className={`dag-node status-${s}${mark?.diff ? ` diff-${mark.diff}` : ""}${data.simulated ? " simulated" : ""}`} data-id={data.key} style={{ width: nodeWidth, height: nodeHeight }}>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <span>{data.title}{mark?.note ? ` (${mark.note})` : ""}{data.simulated && <em className="sim-mark" title="simulated: changes and proves nothing real"> · simulated</em>}</span>
      <span className="sr-only">: {state}</span>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
});

const nodeTypes = { plan: PlanNodeView };

// Dag draws a plan's DAG left to right. The layout and React Flow's nodes
// are made once per shape (layoutKey, the node keys and the edges): marks
// only recolour and annotate, through the mark store.
export function Dag({ layoutKey, nodes, edges, marks, edgeMark, onSelect, label, height = 480 }: {
  layoutKey: string; nodes: DagNode[]; edges: DagEdge[]; marks: (key: string) => Mark | undefined;
  edgeMark?: (e: DagEdge) => "added" | "removed" | undefined;
  onSelect?: (key: string) => void; label: string; height?: number;
}) {
  // The shape, not the props' identity: a new revision (or a cache update
  // that brings its nodes after its number) lays out again; a recolour
  // never does.
  const shape = `${layoutKey}|${nodes.map((n) => n.key).join(",")}|${edges.map((e) => `${e.from}>${e.to}`).join(",")}`;
  const [store] = useState(() => new MarkStore());
  const drawn: Node<NodeData>[] = useMemo(() => {
    const placed = layoutPlan(nodes, edges);
    return nodes.map((n) => ({
      id: n.key,
      type: "plan",
      position: placed.get(n.key) ?? { x: 0, y: 0 },
      // Known dimensions: React Flow draws each node at once instead of
      // hiding it until it is measured.
      width: nodeWidth,
      height: nodeHeight,
      data: { key: n.key, title: n.title, simulated: n.simulated, store },
      ariaLabel: `${n.title} (${n.key})${n.simulated ? ", simulated" : ""}`,
    }));
  }, [shape]); // eslint-disable-line react-hooks/exhaustive-deps
  const lines: Edge[] = useMemo(() => edges.map((e) => {
    const m = edgeMark?.(e);
    return { id: `${e.from}->${e.to}`, source: e.from, target: e.to, className: m ? `diff-${m}` : undefined, animated: m === "added" };
  }), [shape]); // eslint-disable-line react-hooks/exhaustive-deps
  // Before paint: a node never shows a stale mark for a frame.
  useLayoutEffect(() => { store.update(nodes.map((n) => n.key), marks); });
  return (
    <div className="dag" style={{ height }} role="group" aria-label={label}
      onKeyDownCapture={(e) => {
        // Keyboard: Tab reaches each node, Enter opens it (captured before
        // React Flow's own key handling).
        const id = (e.target as HTMLElement).closest?.(".react-flow__node")?.getAttribute("data-id");
        if (id && e.key === "Enter") onSelect?.(id);
      }}>
      <ReactFlow nodes={drawn} edges={lines} nodeTypes={nodeTypes} fitView minZoom={0.05} nodesDraggable={false} nodesConnectable={false}
        proOptions={{ hideAttribution: true }} onNodeClick={(_, n) => onSelect?.(n.id)}>
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
