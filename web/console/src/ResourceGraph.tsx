import { memo, useEffect, useMemo, useRef, type KeyboardEvent } from "react";
import { ReactFlow, ReactFlowProvider, Background, Controls, Handle, Position, useReactFlow, type Node, type NodeProps, type Edge } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { layoutPlan, nodeHeight, nodeWidth } from "./layout";
import { look, Status, words } from "./ui";

// A resource as the graph draws it.
export type GraphResource = { id: string; key: string; type: string; name: string; environment: string; healthStatus: string };
// An edge as its holder holds it: from's relationship points at to (keys).
export type GraphEdge = { from: string; to: string; relationship: string };
// How a drawn resource's expansion stands: expanded (its own neighbours
// drawn), and whether it has more of them to draw.
export type Expansion = { expanded: boolean; more: boolean; busy: boolean };

// What the graph asks of the page around it.
export type GraphActions = {
  onSelect: (r: GraphResource) => void;
  onExpand: (r: GraphResource) => void;
  onCollapse: (r: GraphResource) => void;
};

type NodeData = { r: GraphResource; root: boolean; selected: boolean; mark?: string; expansion?: Expansion; actions: GraphActions };

// ResourceNode shows a resource's type, name, environment and health
// (icon and word, never colour alone), what the page marked it with
// (affected, on the path) in words, and its expand and collapse buttons.
const ResourceNode = memo(function ResourceNode({ data }: NodeProps<Node<NodeData>>) {
  const { r, root, selected, mark, expansion, actions } = data;
  const x = expansion ?? { expanded: false, more: true, busy: false };
  const health = `health-${r.healthStatus.toLowerCase()} line-${look(r.healthStatus).tone}`;
  return (
    <div className={`graph-node ${health}${root ? " root" : ""}${selected ? " selected" : ""}${mark ? " marked" : ""}`} data-id={r.key} data-health={r.healthStatus}
      style={{ width: nodeWidth, minHeight: nodeHeight }}>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <span className="muted">{r.type}{mark && <strong className="mark-word"> · {mark}</strong>}</span>
      <span><strong>{r.name}</strong> · {r.environment || "no environment"} · <Status value={r.healthStatus} /></span>
      <span className="node-actions nodrag nopan">
        {(!x.expanded || x.more) && (
          <button type="button" className="small" disabled={x.busy} aria-label={`${x.expanded ? "more neighbours of" : "expand"} ${r.key}`}
            onClick={(e) => { e.stopPropagation(); actions.onExpand(r); }}>{x.expanded ? "+ more" : "+ expand"}</button>
        )}
        {x.expanded && (
          <button type="button" className="small" aria-label={`collapse ${r.key}`} onClick={(e) => { e.stopPropagation(); actions.onCollapse(r); }}>− collapse</button>
        )}
      </span>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
});

const nodeTypes = { resource: ResourceNode };
const graphNodeHeight = nodeHeight + 22;

type Props = {
  root: string;
  resources: GraphResource[];
  edges: GraphEdge[];
  label: string;
  selected?: string;
  // focus is the key search asked to centre and focus (with a counter,
  // so that the same key found twice moves there again).
  focus?: { key: string; n: number };
  marks?: Map<string, string>;
  expansions?: Map<string, Expansion>;
  actions: GraphActions;
};

// ResourceGraph lays out a resource's neighbourhood left to right with
// dagre (as the plan DAG is): an edge runs from the relationship's holder
// to its target, labelled with its type. Click or Enter selects a node;
// the arrow keys move along the edges (→ to what it points at, ← to what
// points at it) and within a layer (↑ ↓).
export function ResourceGraph(props: Props) {
  return (
    <ReactFlowProvider>
      <Graph {...props} />
    </ReactFlowProvider>
  );
}

function Graph({ root, resources, edges, label, selected, focus, marks, expansions, actions }: Props) {
  const flow = useReactFlow();
  const byKey = useMemo(() => new Map(resources.map((r) => [r.key, r])), [resources]);
  const shape = `${root}|${resources.map((r) => r.key).join(",")}|${edges.map((e) => `${e.from}>${e.to}`).join(",")}`;
  // The layout follows the graph's shape only: a health change recolours
  // a node where it stands.
  const placed = useMemo(() => layoutPlan(resources, edges, graphNodeHeight), [shape]); // eslint-disable-line react-hooks/exhaustive-deps
  // A node keeps its object while nothing it shows changed, so that a
  // health change re-renders one node, not every one.
  const cache = useRef(new Map<string, Node<NodeData>>());
  const drawn: Node<NodeData>[] = useMemo(() => {
    const next = new Map<string, Node<NodeData>>();
    const out = resources.map((r) => {
      const data: NodeData = { r, root: r.key === root, selected: r.key === selected, mark: marks?.get(r.key), expansion: expansions?.get(r.key), actions };
      const position = placed.get(r.key) ?? { x: 0, y: 0 };
      const old = cache.current.get(r.key);
      const same = old && old.position === position && old.data.r === r && old.data.root === data.root && old.data.selected === data.selected &&
        old.data.mark === data.mark && old.data.expansion === data.expansion && old.data.actions === actions;
      const n: Node<NodeData> = same ? old : {
        id: r.key,
        type: "resource",
        position,
        width: nodeWidth,
        height: graphNodeHeight,
        data,
        ariaLabel: `${r.key}, ${r.environment || "no environment"}, health ${words(r.healthStatus)}${data.mark ? `, ${data.mark}` : ""}${data.root ? " (the resource shown)" : ""}`,
      };
      next.set(r.key, n);
      return n;
    });
    cache.current = next;
    return out;
  }, [resources, placed, root, selected, marks, expansions, actions]);
  const lines: Edge[] = useMemo(() => edges.map((e) => ({
    id: `${e.from}-${e.relationship}->${e.to}`, source: e.from, target: e.to, label: words(e.relationship),
    ariaLabel: `${e.from} ${words(e.relationship)} ${e.to}`,
    className: marks?.has(e.from) && marks?.has(e.to) ? "marked" : undefined,
  })), [edges, marks]);
  useEffect(() => {
    if (!focus) return;
    const p = placed.get(focus.key);
    if (!p) return;
    void flow.setCenter(p.x + nodeWidth / 2, p.y + graphNodeHeight / 2, { zoom: 1, duration: 0 }).then(() => focusNode(focus.key));
  }, [focus]); // eslint-disable-line react-hooks/exhaustive-deps
  const onKeyDown = (e: KeyboardEvent) => {
    const el = e.target as HTMLElement;
    if (!el.classList?.contains("react-flow__node")) return; // a button inside a node keeps its keys
    const key = el.getAttribute("data-id");
    if (!key) return;
    if (e.key === "Enter" || e.key === " ") {
      const r = byKey.get(key);
      if (r) actions.onSelect(r);
      e.preventDefault();
      return;
    }
    const next = neighbour(key, e.key, edges, placed);
    if (next) {
      e.preventDefault();
      const p = placed.get(next)!;
      void flow.setCenter(p.x + nodeWidth / 2, p.y + graphNodeHeight / 2, { zoom: flow.getZoom(), duration: 0 }).then(() => focusNode(next));
    }
  };
  return (
    <div className="dag resource-graph" style={{ height: 480 }} role="group" aria-label={label} onKeyDownCapture={onKeyDown}>
      <ReactFlow nodes={drawn} edges={lines} nodeTypes={nodeTypes} fitView minZoom={0.05} nodesDraggable={false} nodesConnectable={false}
        proOptions={{ hideAttribution: true }} onNodeClick={(_, n) => { const r = byKey.get(n.id); if (r) actions.onSelect(r); }}>
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}

function focusNode(key: string) {
  document.querySelector<HTMLElement>(`.resource-graph .react-flow__node[data-id="${CSS.escape(key)}"]`)?.focus();
}

// neighbour is where an arrow key moves the focus from key: along an
// edge (→ what it points at, ← what points at it, nearest the middle
// first) or to the next node above or below in its layer.
export function neighbour(key: string, arrow: string, edges: GraphEdge[], placed: Map<string, { x: number; y: number }>): string | undefined {
  const at = placed.get(key);
  if (!at) return undefined;
  const byY = (a: string, b: string) => (placed.get(a)?.y ?? 0) - (placed.get(b)?.y ?? 0);
  switch (arrow) {
    case "ArrowRight": {
      const ahead = edges.filter((e) => e.from === key).map((e) => e.to).filter((k) => placed.has(k));
      return nearest(ahead, at.y, placed);
    }
    case "ArrowLeft": {
      const behind = edges.filter((e) => e.to === key).map((e) => e.from).filter((k) => placed.has(k));
      return nearest(behind, at.y, placed);
    }
    case "ArrowUp":
    case "ArrowDown": {
      const layer = [...placed.keys()].filter((k) => placed.get(k)!.x === at.x).sort(byY);
      const i = layer.indexOf(key) + (arrow === "ArrowUp" ? -1 : 1);
      return layer[i];
    }
  }
  return undefined;
}

function nearest(keys: string[], y: number, placed: Map<string, { x: number; y: number }>): string | undefined {
  return [...new Set(keys)].sort((a, b) => Math.abs(placed.get(a)!.y - y) - Math.abs(placed.get(b)!.y - y) || a.localeCompare(b))[0];
}
