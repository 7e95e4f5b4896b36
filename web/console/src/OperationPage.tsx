import { useMemo, useState } from "react";
import { useQuery, useSubscription } from "@apollo/client/react";
import { ReactFlow, Background, Controls, Position, type Node, type Edge } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { graphql } from "./gql";
import { layoutPlan, nodeWidth } from "./layout";
import { NodeDrawer } from "./NodeDrawer";

const OperationDetail = graphql(`
  query OperationDetail($id: ID!) {
    operation(id: $id) {
      id
      action
      status
      actor
      planRevision
      currentNodes
      resource {
        key
        lifecycleStatus
        healthStatus
      }
      progress {
        desiredResult
        currentPhase
        progress
        completedNodes
        totalNodes
        needsAttention
        resourceHealth
      }
      plan {
        id
        revision
        nodes {
          key
          type
          title
        }
        edges {
          from
          to
        }
      }
      nodeRuns {
        node
        status
        attempts
        revision
      }
    }
  }
`);

// The operation's timeline from a cursor: node events recolour the DAG.
const OperationLive = graphql(`
  subscription OperationLive($id: ID!, $after: String) {
    operationEvents(operation: $id, after: $after) {
      cursor
      node {
        __typename
        sequence
        type
        ... on NodeEvent {
          node
          runStatus
          attempt
        }
        ... on GateEvent {
          node
          runStatus
        }
        ... on OperationStatusEvent {
          operationStatus
        }
      }
    }
  }
`);

type Run = { status: string; attempts: number };

const colours: Record<string, string> = {
  SUCCEEDED: "#d1f0d9", RUNNING: "#cfe2ff", VERIFYING: "#cfe2ff", FAILED: "#ffd7d5", RETRYING: "#ffe7b3",
  WAITING_APPROVAL: "#fff1b8", WAITING_INTERVENTION: "#fff1b8", SKIPPED: "#eaeef2", CANCELLED: "#eaeef2", ROLLED_BACK: "#eaeef2",
};

// OperationPage shows one operation: simple mode (the result at a glance)
// or advanced mode (the DAG with live node states).
export function OperationPage({ id }: { id: string }) {
  const [mode, setMode] = useState<"simple" | "advanced">("simple");
  const [selected, setSelected] = useState<string | null>(null);
  const { data, error, loading } = useQuery(OperationDetail, { variables: { id } });
  const [live, setLive] = useState<{ runs: Map<string, Run>; status?: string; cursor?: string }>({ runs: new Map() });
  useSubscription(OperationLive, {
    variables: { id, after: null },
    onData: ({ data: msg }) => {
      const edge = msg.data?.operationEvents;
      if (!edge) return;
      setLive((prev) => {
        const runs = new Map(prev.runs);
        const ev = edge.node;
        let status = prev.status;
        if (ev.__typename === "NodeEvent" && ev.runStatus) {
          runs.set(ev.node, { status: ev.runStatus, attempts: ev.attempt ?? runs.get(ev.node)?.attempts ?? 0 });
        }
        if (ev.__typename === "GateEvent" && ev.runStatus) {
          runs.set(ev.node, { status: ev.runStatus, attempts: runs.get(ev.node)?.attempts ?? 1 });
        }
        if (ev.__typename === "OperationStatusEvent" && ev.operationStatus) status = ev.operationStatus;
        return { runs, status, cursor: edge.cursor };
      });
    },
  });
  const op = data?.operation;
  const plan = op?.plan;
  // Layout once per revision.
  const placed = useMemo(() => (plan ? layoutPlan(plan.nodes, plan.edges) : new Map()), [plan?.id, plan?.revision]); // eslint-disable-line
  if (loading) return <p>Loading…</p>;
  if (error) return <p role="alert" className="error">{error.message}</p>;
  if (!op || !plan) return <p role="alert">No such operation.</p>;
  const runOf = (key: string): Run | undefined => live.runs.get(key) ?? op.nodeRuns.find((r) => r.node === key);
  const status = live.status ?? op.status;
  const nodes: Node[] = plan.nodes.map((n) => {
    const run = runOf(n.key);
    const s = run?.status ?? "PENDING";
    return {
      id: n.key,
      position: placed.get(n.key) ?? { x: 0, y: 0 },
      sourcePosition: Position.Right,
      targetPosition: Position.Left,
      data: { label: `${n.title}${run && run.attempts > 1 ? ` (attempt ${run.attempts})` : ""}` },
      style: { width: nodeWidth, background: colours[s] ?? "#fff", border: "1px solid #8c959f", fontSize: 12 },
      ariaLabel: `${n.key}: ${s.toLowerCase()}`,
      className: `dag-node status-${s.toLowerCase()}`,
    };
  });
  const edges: Edge[] = plan.edges.map((e) => ({ id: `${e.from}->${e.to}`, source: e.from, target: e.to }));
  return (
    <section aria-labelledby="operation-title">
      <p><a href="#/">← Operations</a></p>
      <h2 id="operation-title">
        {op.action} {op.resource?.key ?? ""} <span className={`status status-${status.toLowerCase()}`}>{status}</span>
      </h2>
      <div role="tablist" aria-label="mode">
        <button role="tab" aria-selected={mode === "simple"} onClick={() => setMode("simple")}>Simple</button>
        <button role="tab" aria-selected={mode === "advanced"} onClick={() => setMode("advanced")}>Advanced</button>
      </div>
      {mode === "simple" ? (
        <dl className="simple">
          <dt>Desired result</dt><dd><code>{JSON.stringify(op.progress.desiredResult ?? {})}</code></dd>
          <dt>Current phase</dt><dd>{op.progress.currentPhase}</dd>
          <dt>Progress</dt><dd><progress max={1} value={op.progress.progress} aria-label="progress" /> {op.progress.completedNodes}/{op.progress.totalNodes}</dd>
          <dt>Needs attention</dt><dd>{op.progress.needsAttention.length ? op.progress.needsAttention.join("; ") : "nothing"}</dd>
          <dt>Resource health</dt><dd>{op.progress.resourceHealth ?? op.resource?.healthStatus ?? "unknown"}</dd>
        </dl>
      ) : (
        <div className="dag" style={{ height: 480 }} aria-label={`plan revision ${plan.revision}`}>
          <ReactFlow nodes={nodes} edges={edges} fitView nodesDraggable={false} nodesConnectable={false} proOptions={{ hideAttribution: true }}
            onNodeClick={(_, n) => setSelected(n.id)}>
            <Background />
            <Controls showInteractive={false} />
          </ReactFlow>
        </div>
      )}
      {selected && <NodeDrawer key={selected} operation={op.id} node={selected} onClose={() => setSelected(null)} />}
    </section>
  );
}
