import { useEffect, useMemo, useRef, useState } from "react";
import { useMutation, useQuery } from "@apollo/client/react";
import { graphql } from "./gql";
import { Dag, dagStatuses, stageStatus } from "./Dag";
import { NodeDrawer } from "./NodeDrawer";
import { Patches } from "./Patches";
import { TimelineView } from "./TimelineView";
import { useTimeline } from "./useTimeline";
import { finalStatuses } from "./timeline";
import { ActionButton, may, useViewer } from "./viewer";
import { KeyValues, Status, StatusLegend } from "./ui";

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
        id
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
          simulated
          children
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

const CancelOperation = graphql(`
  mutation CancelOperation($id: ID!, $reason: String) {
    cancelOperation(input: { operation: $id, reason: $reason }) {
      id
      status
    }
  }
`);

type Run = { status: string; attempts: number; revision?: number | null };
type Tab = "simple" | "advanced" | "timeline" | "patches";
const tabs: { id: Tab; label: string }[] = [
  { id: "simple", label: "Simple" }, { id: "advanced", label: "Advanced" }, { id: "timeline", label: "Timeline" }, { id: "patches", label: "Patches" },
];

// OperationPage shows one operation: simple mode (the result at a
// glance), advanced mode (the DAG with live node states and a drawer per
// node), its timeline and its patches. One timeline subscription feeds
// them all; a new plan revision is read again (and laid out once).
export function OperationPage({ id }: { id: string }) {
  const [tab, setTab] = useState<Tab>("simple");
  const [selected, setSelected] = useState<string | null>(null);
  const { data, error, loading, refetch } = useQuery(OperationDetail, { variables: { id } });
  const timeline = useTimeline(id);
  const viewer = useViewer();
  const [cancel, cancelled] = useMutation(CancelOperation);

  // Runs, status and revision as the timeline tells them, over what the
  // query read.
  const live = useMemo(() => {
    const runs = new Map<string, Run>();
    let status: string | undefined;
    let revision = 0;
    let patchEvents = 0;
    const nodeEvents = new Map<string, number>();
    for (const e of timeline.events) {
      if (e.__typename === "PatchEvent" || e.__typename === "PlanRevisedEvent") patchEvents++;
      if ("node" in e && typeof e.node === "string") nodeEvents.set(e.node, (nodeEvents.get(e.node) ?? 0) + 1);
      if ((e.__typename === "NodeEvent" || e.__typename === "GateEvent") && e.runStatus) {
        const prev = runs.get(e.node);
        runs.set(e.node, {
          status: e.runStatus,
          attempts: (e.__typename === "NodeEvent" ? e.attempt : null) ?? prev?.attempts ?? 1,
          revision: (e.__typename === "NodeEvent" ? e.revision : null) ?? prev?.revision,
        });
      }
      if (e.__typename === "OperationStatusEvent" && e.operationStatus) status = e.operationStatus;
      if (e.__typename === "PlanRevisedEvent" && e.revision) revision = Math.max(revision, e.revision);
    }
    return { runs, status, revision, patchEvents, nodeEvents };
  }, [timeline.events]);

  const op = data?.operation;
  // A revision the page has not read yet: read the plan again.
  const asked = useRef(0);
  useEffect(() => {
    if (op && live.revision > op.plan.revision && asked.current < live.revision) {
      asked.current = live.revision;
      void refetch();
    }
  }, [live.revision, op, refetch]);
  // A finished operation's final progress and resource health.
  useEffect(() => {
    if (timeline.done) void refetch();
  }, [timeline.done, refetch]);

  const readRuns = useMemo(() => new Map((op?.nodeRuns ?? []).map((r) => [r.node, r])), [op?.nodeRuns]);
  if (loading && !op) return <p>Loading…</p>;
  if (error) return <p role="alert" className="error">{error.message}</p>;
  if (!op) return <p role="alert">No such operation.</p>;
  const plan = op.plan;
  const status = live.status ?? op.status;
  const ended = finalStatuses.has(status);
  const children = new Map(plan.nodes.filter((n) => n.children.length > 0).map((n) => [n.key, n.children]));
  const runOf = (key: string): Run | undefined => live.runs.get(key) ?? readRuns.get(key);
  // A stage has no run: its status is its children's.
  const statusOf = (key: string): string | undefined => {
    const kids = children.get(key);
    return kids ? stageStatus(kids.map(statusOf), ended) : runOf(key)?.status;
  };

  return (
    <section aria-labelledby="operation-title">
      <p><a href="#/">← Operations</a></p>
      <h2 id="operation-title">
        {op.action} {op.resource?.key ?? ""} <Status value={status} />
      </h2>
      <p className="muted">
        Started by {op.actor} · plan revision {plan.revision} · <a href={`#/plans/${encodeURIComponent(plan.id)}`}>plan</a>
        {op.resource && <> · <a href={`#/explorer/${encodeURIComponent(op.resource.id)}`}>resource</a></>}
      </p>
      {!ended && (
        <ActionButton verdict={may(viewer, "CANCEL_OPERATION")} busy={cancelled.loading} onClick={() => {
          const reason = window.prompt("Why cancel this operation? (recorded in its timeline)");
          if (reason !== null) void cancel({ variables: { id: op.id, reason } });
        }} kind="danger">Cancel operation</ActionButton>
      )}
      {cancelled.error && <p role="alert" className="error">{cancelled.error.message}</p>}
      <div role="tablist" aria-label="view" onKeyDown={(e) => {
        // Arrow keys move between the tabs (one tab stop for the list).
        const i = tabs.findIndex((t) => t.id === tab);
        const next = e.key === "ArrowRight" ? (i + 1) % tabs.length : e.key === "ArrowLeft" ? (i + tabs.length - 1) % tabs.length
          : e.key === "Home" ? 0 : e.key === "End" ? tabs.length - 1 : -1;
        if (next < 0) return;
        e.preventDefault();
        setTab(tabs[next].id);
        document.getElementById(`tab-${tabs[next].id}`)?.focus();
      }}>
        {tabs.map((t) => (
          <button key={t.id} role="tab" id={`tab-${t.id}`} aria-selected={tab === t.id} aria-controls={`panel-${t.id}`}
            tabIndex={tab === t.id ? 0 : -1} onClick={() => setTab(t.id)}>{t.label}</button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === "simple" && (
          <dl className="simple">
            <dt>Desired result</dt><dd><KeyValues value={op.progress.desiredResult} label="desired result" /></dd>
            <dt>Current phase</dt><dd>{op.progress.currentPhase}</dd>
            <dt>Progress</dt><dd><progress max={1} value={op.progress.progress} aria-label="progress" /> {op.progress.completedNodes}/{op.progress.totalNodes}</dd>
            <dt>Needs attention</dt><dd>{op.progress.needsAttention.length ? op.progress.needsAttention.join("; ") : "nothing"}</dd>
            <dt>Resource health</dt><dd>{op.progress.resourceHealth ?? op.resource?.healthStatus ?? "unknown"}</dd>
          </dl>
        )}
        {tab === "advanced" && (
          <>
            <p className="muted">Now: {op.currentNodes.length ? op.currentNodes.join(", ") : "no node running"}. Select a node (or Tab to it and press Enter) for its contract, evidence, artifacts and gate.</p>
            <Dag layoutKey={`${plan.id}@${plan.revision}`} nodes={plan.nodes} edges={plan.edges} label={`plan revision ${plan.revision}`}
              onSelect={setSelected}
              marks={(key) => {
                const run = runOf(key);
                const notes = [];
                if (run && run.attempts > 1) notes.push(`attempt ${run.attempts}`);
                if (run?.revision && run.revision !== plan.revision) notes.push(`ran on r${run.revision}`);
                return { status: statusOf(key), note: notes.join(", ") || undefined };
              }} />
            <StatusLegend statuses={dagStatuses} label="node status legend" />
          </>
        )}
        {tab === "timeline" && <TimelineView timeline={timeline} />}
        {tab === "patches" && <Patches operation={op.id} revision={plan.revision} nodes={plan.nodes.map((n) => n.key)} patchEvents={live.patchEvents} ended={ended} />}
      </div>
      {selected && tab === "advanced" && (
        <NodeDrawer key={selected} operation={op.id} node={selected} runStatus={statusOf(selected)}
          children={children.get(selected)?.map((c) => ({ key: c, title: plan.nodes.find((n) => n.key === c)?.title ?? c, status: statusOf(c) }))}
          events={live.nodeEvents.get(selected) ?? 0} onClose={() => setSelected(null)} />
      )}
    </section>
  );
}
