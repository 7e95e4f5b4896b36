import { memo, useMemo } from "react";
import { ReactFlow, Background, Controls, Handle, Position, type Node, type NodeProps, type Edge } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { layoutPlan, nodeHeight, nodeWidth } from "./layout";
import { Status, words } from "./ui";

// A resource as the graph draws it.
export type GraphResource = { id: string; key: string; type: string; name: string; environment: string; healthStatus: string };
// An edge as its holder holds it: from's relationship points at to (keys).
export type GraphEdge = { from: string; to: string; relationship: string };

type NodeData = { r: GraphResource; root: boolean };

// ResourceNode shows a resource's type, name, environment and health
// (icon and word, never colour alone).
const ResourceNode = memo(function ResourceNode({ data }: NodeProps<Node<NodeData>>) {
  const { r, root } = data;
  return (
    <div className={`graph-node${root ? " root" : ""}`} data-id={r.key} style={{ width: nodeWidth, minHeight: nodeHeight }}>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <span className="muted">{r.type}</span>
      <span><strong>{r.name}</strong> · {r.environment} · <Status value={r.healthStatus} /></span>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
});

const nodeTypes = { resource: ResourceNode };

// ResourceGraph lays out a resource's neighbourhood left to right with
// dagre (as the plan DAG is): an edge runs from the relationship's holder
// to its target, labelled with its type. Click or Enter on a node opens
// it.
export function ResourceGraph({ root, resources, edges, onOpen, label }: {
  root: string; resources: GraphResource[]; edges: GraphEdge[]; onOpen: (r: GraphResource) => void; label: string;
}) {
  const byKey = useMemo(() => new Map(resources.map((r) => [r.key, r])), [resources]);
  const shape = `${root}|${resources.map((r) => `${r.key}:${r.healthStatus}`).join(",")}|${edges.map((e) => `${e.from}>${e.to}`).join(",")}`;
  const drawn: Node<NodeData>[] = useMemo(() => {
    const placed = layoutPlan(resources, edges);
    return resources.map((r) => ({
      id: r.key,
      type: "resource",
      position: placed.get(r.key) ?? { x: 0, y: 0 },
      width: nodeWidth,
      height: nodeHeight,
      data: { r, root: r.key === root },
      ariaLabel: `${r.key}, ${r.environment}, health ${words(r.healthStatus)}${r.key === root ? " (the resource shown)" : ""}`,
    }));
  }, [shape]); // eslint-disable-line react-hooks/exhaustive-deps
  const lines: Edge[] = useMemo(() => edges.map((e) => ({
    id: `${e.from}-${e.relationship}->${e.to}`, source: e.from, target: e.to, label: words(e.relationship),
    ariaLabel: `${e.from} ${words(e.relationship)} ${e.to}`,
  })), [shape]); // eslint-disable-line react-hooks/exhaustive-deps
  const open = (key: string) => { const r = byKey.get(key); if (r) onOpen(r); };
  return (
    <div className="dag resource-graph" style={{ height: 420 }} role="group" aria-label={label}
      onKeyDownCapture={(e) => {
        const key = (e.target as HTMLElement).closest?.(".react-flow__node")?.getAttribute("data-id");
        if (key && e.key === "Enter") open(key);
      }}>
      <ReactFlow nodes={drawn} edges={lines} nodeTypes={nodeTypes} fitView minZoom={0.05} nodesDraggable={false} nodesConnectable={false}
        proOptions={{ hideAttribution: true }} onNodeClick={(_, n) => open(n.id)}>
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
