import { memo, useLayoutEffect, useMemo, useState, useSyncExternalStore } from "react";
import { ReactFlow, Background, Controls, Handle, Position, type Node, type NodeProps, type Edge } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { layoutPlan, nodeHeight, nodeWidth } from "./layout";
import { look, words } from "./ui";

// A stage groups children (type STAGE): it is drawn with a dashed
// "contains" edge to each child that nothing else in the stage precedes,
// so its children hang from it instead of floating in a row of their own.
export type DagNode = { key: string; title: string; simulated?: boolean; type?: string; children?: string[] };
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

type NodeData = { key: string; title: string; simulated?: boolean; stage: boolean; store: MarkStore };

// PlanNodeView is one node: its title, and its mark read from the store.
const PlanNodeView = memo(function PlanNodeView({ data }: NodeProps<Node<NodeData>>) {
  const mark = useSyncExternalStore((f) => data.store.subscribe(data.key, f), () => data.store.get(data.key));
  const s = (mark?.status ?? "PENDING").toLowerCase();
  const state = mark?.diff ?? words(s);
  return (
    <div className={`dag-node status-${s}${mark?.diff ? ` diff-${mark.diff}` : ""}${data.simulated ? " simulated" : ""}${data.stage ? " stage" : ""}`} data-id={data.key} style={{ width: nodeWidth, height: nodeHeight }}>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      {!mark?.diff && mark?.status && <span className="icon" aria-hidden="true">{look(s).icon}</span>}
      <span>{data.stage && <span className="muted">Stage · </span>}{data.title}{mark?.note ? ` (${mark.note})` : ""}{data.simulated && <em className="sim-mark" title="simulated: changes and proves nothing real"> · simulated</em>}</span>
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
  const contains = useMemo(() => containsEdges(nodes, edges), [shape]); // eslint-disable-line react-hooks/exhaustive-deps
  const drawn: Node<NodeData>[] = useMemo(() => {
    const placed = layoutPlan(nodes, [...edges, ...contains]);
    return nodes.map((n) => ({
      id: n.key,
      type: "plan",
      position: placed.get(n.key) ?? { x: 0, y: 0 },
      // Known dimensions: React Flow draws each node at once instead of
      // hiding it until it is measured.
      width: nodeWidth,
      height: nodeHeight,
      data: { key: n.key, title: n.title, simulated: n.simulated, stage: n.type === "STAGE", store },
      ariaLabel: `${n.type === "STAGE" ? "stage " : ""}${n.title} (${n.key})${n.simulated ? ", simulated" : ""}`,
    }));
  }, [shape]); // eslint-disable-line react-hooks/exhaustive-deps
  const lines: Edge[] = useMemo(() => [
    ...edges.map((e) => {
      const m = edgeMark?.(e);
      return { id: `${e.from}->${e.to}`, source: e.from, target: e.to, className: m ? `diff-${m}` : undefined, animated: m === "added" };
    }),
    ...contains.map((e) => ({ id: `${e.from}=>${e.to}`, source: e.from, target: e.to, className: "contains" })),
  ], [shape]); // eslint-disable-line react-hooks/exhaustive-deps
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

// containsEdges are a stage's edges to its children that no sibling
// precedes.
export function containsEdges(nodes: DagNode[], edges: DagEdge[]): DagEdge[] {
  const out: DagEdge[] = [];
  for (const n of nodes) {
    if (!n.children?.length) continue;
    const kids = new Set(n.children);
    const preceded = new Set(edges.filter((e) => kids.has(e.from) && kids.has(e.to)).map((e) => e.to));
    for (const c of n.children) if (!preceded.has(c)) out.push({ from: n.key, to: c });
  }
  return out;
}

// stageStatus is a stage's status from its children's (a stage has no run
// of its own): failed, waiting or running when one child is; cancelled
// when one was cancelled; skipped when all were; succeeded when every
// child is done; else pending. Once the operation has ended nothing runs:
// a stage it left unfinished reads cancelled.
export function stageStatus(children: (string | undefined)[], ended = false): string | undefined {
  const s = children.map((c) => c ?? "PENDING");
  if (s.length === 0) return undefined;
  if (s.includes("FAILED")) return "FAILED";
  const done = ["SUCCEEDED", "SKIPPED", "CANCELLED", "ROLLED_BACK"];
  if (ended && !s.every((x) => done.includes(x))) return "CANCELLED";
  for (const first of ["WAITING_INTERVENTION", "WAITING_APPROVAL", "RETRYING", "RUNNING", "VERIFYING"]) {
    if (s.includes(first)) return first === "RETRYING" || first === "VERIFYING" ? "RUNNING" : first;
  }
  if (s.every((x) => done.includes(x))) {
    if (s.includes("ROLLED_BACK")) return "ROLLED_BACK";
    if (s.includes("CANCELLED")) return "CANCELLED";
    return s.every((x) => x === "SKIPPED") ? "SKIPPED" : "SUCCEEDED";
  }
  return s.some((x) => x !== "PENDING" && x !== "READY") ? "RUNNING" : "PENDING";
}

// dagStatuses are the statuses a DAG's legend lists.
export const dagStatuses = ["PENDING", "RUNNING", "VERIFYING", "RETRYING", "WAITING_APPROVAL", "WAITING_INTERVENTION", "SUCCEEDED", "FAILED",
  "SKIPPED", "CANCELLED", "ROLLED_BACK"];
