import { useEffect, useRef, useState } from "react";
import { useMutation, useQuery } from "@apollo/client/react";
import { words } from "./ui";
import { graphql } from "./gql";
import type { PatchesQuery, PlanChangeOp } from "./gql/graphql";
import { Dag, type DagEdge } from "./Dag";
import { ActionButton, ReadOnlyNote, may, readOnly, useViewer } from "./viewer";

const PatchesQueryDoc = graphql(`
  query Patches($id: ID!) {
    nodeTemplates {
      name
      pack
      description
      parameters
    }
    operation(id: $id) {
      id
      plan {
        id
      }
      patches {
        id
        status
        author
        reason
        baseRevision
        digest
        appliedRevision
        closedReason
        createdAt
        changes {
          op
          node
          template
          nodeId
          parameters
          reason
          edge {
            from
            to
          }
          requirement
          provider
        }
        approvals {
          rule
          reason
          roles
          approvals
        }
        outstanding {
          rule
          approvals
        }
        decisions {
          actor
          roles
          approve
          comment
          digest
        }
        reverts {
          id
        }
        analysis {
          analyzer
          diagnosis
          missingCapabilities
          droppedFindings
          findings {
            detail
            citations {
              kind
              id
            }
          }
          model {
            name
            promptTokens
            completionTokens
            latencyMs
            toolCalls {
              tool
            }
          }
        }
        viewerMayDecide {
          allowed
          reason
        }
        viewerMayWithdraw {
          allowed
          reason
        }
        viewerMayRevert {
          allowed
          reason
        }
      }
    }
  }
`);

const PatchDiff = graphql(`
  query PatchDiff($patch: ID!, $plan: ID!, $base: Int!) {
    planPatch(id: $patch) {
      id
      diff {
        from
        to
        nodesAdded {
          key
          title
        }
        nodesRemoved {
          key
          title
        }
        nodesChanged {
          key
          fields {
            path
            old
            new
          }
        }
        edgesAdded {
          from
          to
        }
        edgesRemoved {
          from
          to
        }
        parameters {
          path
          old
          new
        }
        gates
      }
    }
    planRevision(plan: $plan, revision: $base) {
      revision
      nodes {
        key
        title
      }
      edges {
        from
        to
      }
    }
  }
`);

const ProposePatch = graphql(`
  mutation ProposePatch($op: ID!, $base: Int!, $changes: [PlanChangeInput!]!, $reason: String!) {
    proposePlanPatch(input: { operation: $op, baseRevision: $base, changes: $changes, reason: $reason }) {
      id
      status
    }
  }
`);

const DecidePatch = graphql(`
  mutation DecidePatch($patch: ID!, $approve: Boolean!, $digest: String!, $comment: String) {
    decidePlanPatch(input: { patch: $patch, approve: $approve, digest: $digest, comment: $comment }) {
      id
      status
      appliedRevision
    }
  }
`);

const RevertPatch = graphql(`
  mutation RevertPatch($patch: ID!, $reason: String!) {
    revertPlanPatch(input: { patch: $patch, reason: $reason }) {
      id
      status
    }
  }
`);

const WithdrawPatch = graphql(`
  mutation WithdrawPatch($patch: ID!, $reason: String!) {
    withdrawPlanPatch(input: { patch: $patch, reason: $reason }) {
      id
      status
    }
  }
`);

type Patch = NonNullable<PatchesQuery["operation"]>["patches"][number];

// Patches lists an operation's plan patches: what each changes (a graph
// diff and a field diff), who must approve and why, the decisions so far;
// approve and reject bind to the digest shown; an applied patch can be
// reverted (a new patch, approved like any other).
export function Patches({ operation, revision, nodes, patchEvents, ended }: { operation: string; revision: number; nodes: string[]; patchEvents: number; ended: boolean }) {
  const { data, error, refetch } = useQuery(PatchesQueryDoc, { variables: { id: operation }, fetchPolicy: "cache-and-network" });
  const [open, setOpen] = useState<string | null>(null);
  // A patch event (proposed, decided, applied, stale, …) or a new
  // revision: read the list again, at most every quarter second.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) { first.current = false; return; }
    const t = setTimeout(() => void refetch(), 250);
    return () => clearTimeout(t);
  }, [patchEvents, refetch]);
  if (error) return <p role="alert" className="error">{error.message}</p>;
  const op = data?.operation;
  if (!op) return <p>Loading…</p>;
  const patches = [...op.patches].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return (
    <section aria-labelledby="patches-title">
      <h3 id="patches-title">Patches</h3>
      <ReadOnlyNote />
      {/* A finished operation takes no patch (the server would refuse
          one): its history stays readable below. */}
      {ended ? <p className="muted" role="note">The operation has ended: it takes no more patches.</p>
        : <ProposeForm operation={operation} revision={revision} nodes={nodes} templates={data.nodeTemplates} onProposed={(id) => { setOpen(id); void refetch(); }} />}
      {patches.length === 0 && <p>No patch yet.</p>}
      <ul className="patches">
        {patches.map((p) => (
          <li key={p.id} data-status={p.status}>
            <button type="button" className="link" aria-expanded={open === p.id} onClick={() => setOpen(open === p.id ? null : p.id)}>
              {p.status.toLowerCase()} · {p.reason} · by {p.author}
            </button>
            {open === p.id && <PatchDetail patch={p} plan={op.plan.id} onChanged={() => void refetch()} />}
          </li>
        ))}
      </ul>
    </section>
  );
}

function PatchDetail({ patch, plan, onChanged }: { patch: Patch; plan: string; onChanged: () => void }) {
  const [decide, decided] = useMutation(DecidePatch);
  const [revert, reverted] = useMutation(RevertPatch);
  const [withdraw, withdrawn] = useMutation(WithdrawPatch);
  const [comment, setComment] = useState("");
  const act = async (approve: boolean) => {
    // The decision binds to the digest this page shows: if the patch
    // changed since, the server refuses it (CONFLICT).
    // A refusal (a CONFLICT if it changed) shows in decided.error.
    await decide({ variables: { patch: patch.id, approve, digest: patch.digest, comment: comment || null } }).catch(() => {});
    onChanged();
  };
  const err = decided.error ?? reverted.error ?? withdrawn.error;
  return (
    <div className="patch" aria-label={`patch ${patch.id}`}>
      <p>Base revision {patch.baseRevision}{patch.appliedRevision && ` → applied as revision ${patch.appliedRevision}`} · digest <code className="digest">{patch.digest}</code></p>
      {patch.reverts && <p>Reverts {patch.reverts.id}.</p>}
      {patch.analysis && <AnalysisView analysis={patch.analysis} />}
      {patch.closedReason && <p>Closed: {patch.closedReason}</p>}
      <h4>Changes</h4>
      <ol>{patch.changes.map((c, i) => <li key={i}><code>{c.op}</code> {[c.node, c.template && `template ${c.template}`, c.nodeId && `as ${c.nodeId}`, c.parameters && JSON.stringify(c.parameters), c.edge && `${c.edge.from} → ${c.edge.to}`, c.requirement && `${c.requirement} → ${c.provider}`, c.reason].filter(Boolean).join(" · ")}</li>)}</ol>
      <DiffView patch={patch.id} plan={plan} base={patch.baseRevision} />
      <h4>Who must approve</h4>
      <ul>
        {patch.approvals.length ? patch.approvals.map((r) => {
          const left = patch.outstanding.find((o) => o.rule === r.rule)?.approvals ?? 0;
          return <li key={r.rule}><strong>{r.rule}</strong>: {r.approvals} of {r.roles.join(", ")} — {r.reason}{left > 0 ? ` (${left} outstanding)` : " (met)"}</li>;
        }) : <li>no approval needed</li>}
      </ul>
      <p>Decisions: {patch.decisions.length ? patch.decisions.map((d) => `${d.actor} ${d.approve ? "approved" : "rejected"}${d.comment ? `: ${d.comment}` : ""}`).join("; ") : "none yet"}</p>
      {patch.status === "PROPOSED" && (
        <>
          {!patch.viewerMayDecide.allowed || <label>Comment <input aria-label="Comment" value={comment} onChange={(e) => setComment(e.target.value)} /></label>}
          <ActionButton verdict={patch.viewerMayDecide} busy={decided.loading} onClick={() => void act(true)}>Approve patch</ActionButton>
          <ActionButton verdict={patch.viewerMayDecide} busy={decided.loading} onClick={() => void act(false)}>Reject patch</ActionButton>
          <ActionButton verdict={patch.viewerMayWithdraw} busy={withdrawn.loading} onClick={() => {
            const reason = window.prompt("Why withdraw it?");
            if (reason) withdraw({ variables: { patch: patch.id, reason } }).then(onChanged, () => {});
          }}>Withdraw</ActionButton>
        </>
      )}
      {patch.status === "APPLIED" && (
        <ActionButton verdict={patch.viewerMayRevert} busy={reverted.loading} onClick={() => {
          const reason = window.prompt("Why revert it? (the inverse is proposed as a new patch)");
          if (reason) revert({ variables: { patch: patch.id, reason } }).then(onChanged, () => {});
        }}>Revert</ActionButton>
      )}
      {decided.data && <p role="status">The patch is {decided.data.decidePlanPatch.status.toLowerCase()}.</p>}
      {reverted.data && <p role="status">Revert proposed: {reverted.data.revertPlanPatch.id}.</p>}
      {err && <p role="alert" className="error">{err.message}</p>}
    </div>
  );
}

// DiffView draws a patch's planDiff as a graph diff — the base revision's
// DAG with added nodes and edges, removed ones kept and struck, changed
// ones marked — and as a field diff.
function DiffView({ patch, plan, base }: { patch: string; plan: string; base: number }) {
  const { data, error } = useQuery(PatchDiff, { variables: { patch, plan, base } });
  if (error) return <p role="alert" className="error">{error.message}</p>;
  const diff = data?.planPatch?.diff;
  const rev = data?.planRevision;
  if (!diff || !rev) return <p>Loading the diff…</p>;
  const added = new Set(diff.nodesAdded.map((n) => n.key));
  const removed = new Set(diff.nodesRemoved.map((n) => n.key));
  const changed = new Set(diff.nodesChanged.map((n) => n.key));
  const nodes = [...rev.nodes, ...diff.nodesAdded.filter((n) => !rev.nodes.some((r) => r.key === n.key))];
  const key = (e: DagEdge) => `${e.from}->${e.to}`;
  const addedEdges = new Set(diff.edgesAdded.map(key));
  const removedEdges = new Set(diff.edgesRemoved.map(key));
  const edges = [...rev.edges, ...diff.edgesAdded.filter((e) => !rev.edges.some((r) => key(r) === key(e)))];
  const fields = [...diff.nodesChanged.flatMap((n) => n.fields.map((f) => ({ where: n.key, ...f }))), ...diff.parameters.map((f) => ({ where: "plan parameters", ...f }))];
  return (
    <section aria-label="diff">
      <h4>Diff: revision {diff.from} → {diff.to}</h4>
      <p className="legend">
        <span className="diff-added">{added.size} added</span> · <span className="diff-removed">{removed.size} removed</span> · <span className="diff-changed">{changed.size} changed</span>
        {diff.gates.length > 0 && ` · gates affected: ${diff.gates.join(", ")}`}
      </p>
      <Dag layoutKey={`${patch}@diff`} nodes={nodes} edges={edges} height={320} label={`diff of patch ${patch}`}
        marks={(k) => ({ diff: added.has(k) ? "added" : removed.has(k) ? "removed" : changed.has(k) ? "changed" : undefined })}
        edgeMark={(e) => (addedEdges.has(key(e)) ? "added" : removedEdges.has(key(e)) ? "removed" : undefined)} />
      <table className="fielddiff">
        <caption>Field diff</caption>
        <thead><tr><th scope="col">Where</th><th scope="col">Field</th><th scope="col">Before</th><th scope="col">After</th></tr></thead>
        <tbody>
          {diff.nodesAdded.map((n) => <tr key={`+${n.key}`} className="diff-added"><td>{n.key}</td><td>(node)</td><td>—</td><td>{n.title}</td></tr>)}
          {diff.nodesRemoved.map((n) => <tr key={`-${n.key}`} className="diff-removed"><td>{n.key}</td><td>(node)</td><td>{n.title}</td><td>—</td></tr>)}
          {fields.map((f, i) => <tr key={i} className="diff-changed"><td>{f.where}</td><td><code>{f.path}</code></td><td><code>{show(f.old)}</code></td><td><code>{show(f.new)}</code></td></tr>)}
        </tbody>
      </table>
    </section>
  );
}

function show(v: unknown): string {
  return v === undefined || v === null ? "—" : typeof v === "string" ? v : JSON.stringify(v);
}

const ops: PlanChangeOp[] = ["INSERT_AFTER", "INSERT_BEFORE", "SET_PARAMETERS", "SKIP", "RETRY", "REMOVE"];

// ProposeForm proposes a patch made from node templates and parameters
// (the change vocabulary every edit shares), on the revision shown.
function ProposeForm({ operation, revision, nodes, templates, onProposed }: {
  operation: string; revision: number; nodes: string[]; templates: { name: string; pack: string; description?: string | null; parameters: string[] }[];
  onProposed: (id: string) => void;
}) {
  const viewer = useViewer();
  const [propose, { error, loading }] = useMutation(ProposePatch);
  const [op, setOp] = useState<PlanChangeOp>("INSERT_AFTER");
  const [node, setNode] = useState(nodes[nodes.length - 1] ?? "");
  const [template, setTemplate] = useState(templates[0]?.name ?? "");
  const [nodeId, setNodeId] = useState("");
  const [params, setParams] = useState("");
  const [reason, setReason] = useState("");
  const verdict = may(viewer, "PROPOSE_PATCH");
  if (!verdict.allowed && readOnly(viewer)) return null;
  const inserts = op === "INSERT_AFTER" || op === "INSERT_BEFORE";
  let parsed: Record<string, unknown> | null = null;
  let paramsError = "";
  if (params.trim()) {
    try { parsed = JSON.parse(params); } catch (e) { paramsError = `parameters are not JSON: ${(e as Error).message}`; }
  }
  const ready = !reason.trim() ? { allowed: false, reason: "give a reason" } : paramsError ? { allowed: false, reason: paramsError } : verdict;
  return (
    <form className="propose" aria-label="propose a patch" onSubmit={async (e) => {
      e.preventDefault();
      const change = { op, node, ...(inserts ? { template, nodeId: nodeId || null } : {}), ...(parsed ? { parameters: parsed } : {}) };
      const r = await propose({ variables: { op: operation, base: revision, changes: [change], reason } }).catch(() => null);
      if (r?.data) { setReason(""); onProposed(r.data.proposePlanPatch.id); }
    }}>
      <fieldset>
        <legend>Propose a patch on revision {revision}</legend>
        <label>Change <select aria-label="Change" value={op} onChange={(e) => setOp(e.target.value as PlanChangeOp)}>{ops.map((o) => <option key={o} value={o}>{words(o)}</option>)}</select></label>
        <label>Node <select aria-label="Node" value={node} onChange={(e) => setNode(e.target.value)}>{nodes.map((n) => <option key={n}>{n}</option>)}</select></label>
        {inserts && (
          <>
            <label>Template <select aria-label="Template" value={template} onChange={(e) => setTemplate(e.target.value)}>{templates.map((t) => <option key={`${t.pack}/${t.name}`} value={t.name}>{t.name} ({t.pack})</option>)}</select></label>
            <label>New node id <input aria-label="New node id" value={nodeId} onChange={(e) => setNodeId(e.target.value)} placeholder="from the template" /></label>
          </>
        )}
        <label>Parameters (JSON) <input aria-label="Parameters (JSON)" value={params} onChange={(e) => setParams(e.target.value)} placeholder='{"mirror": "…"}' /></label>
        <label>Reason <input aria-label="Reason" value={reason} onChange={(e) => setReason(e.target.value)} /></label>
        <span className="action">
          <button type="submit" disabled={!ready.allowed || loading}>Propose</button>
          {!ready.allowed && <span className="why">{ready.reason}</span>}
        </span>
      </fieldset>
      {error && <p role="alert" className="error">{error.message}</p>}
    </form>
  );
}

// AnalysisView shows what an analyzer found and which one answered: the
// packs' rules, the deterministic analyzer or a model (with what it
// spent, the tools it called and the findings dropped for citing records
// the operation does not have).
function AnalysisView({ analysis: a }: { analysis: NonNullable<Patch["analysis"]> }) {
  return (
    <div className="analysis" aria-label="analysis">
      <p>Diagnosis by {a.analyzer}: {a.diagnosis} {a.missingCapabilities.length > 0 && `(missing ${a.missingCapabilities.join(", ")})`}</p>
      {a.model && (
        <p>
          Model {a.model.name} · {a.model.promptTokens + a.model.completionTokens} tokens · {a.model.latencyMs} ms
          {a.model.toolCalls.length > 0 && ` · tools ${a.model.toolCalls.map((t) => t.tool).join(", ")}`}
          {a.droppedFindings > 0 && ` · ${a.droppedFindings} finding${a.droppedFindings > 1 ? "s" : ""} dropped for citing what the operation does not have`}
        </p>
      )}
      {a.findings.length > 0 && (
        <ul>
          {a.findings.map((f, i) => (
            <li key={i}>{f.detail}{f.citations.length > 0 && <> · cites {f.citations.map((c) => `${c.kind} ${c.id}`).join(", ")}</>}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
