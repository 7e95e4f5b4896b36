import { useState } from "react";
import { useMutation, useQuery } from "@apollo/client/react";
import { graphql } from "./gql";
import type { PlanChangeOp, PlanReviewQuery } from "./gql/graphql";
import { ClusterPreview } from "./ClusterPreview";
import { Dag } from "./Dag";
import { ActionButton, ReadOnlyNote, readOnly, useViewer } from "./viewer";
import { KeyValues, Status, words } from "./ui";

const PlanReviewDoc = graphql(`
  query PlanReview($id: ID!) {
    nodeTemplates {
      name
      pack
      description
      parameters
    }
    plan(id: $id) {
      id
      status
      revision
      version
      digest
      scenarioRef
      problems
      parameters
      intent {
        id
        action
        targetResourceType
        desiredResult
        constraints
        actor
      }
      summary {
        currentPhase
        steps
        bindings
      }
      target {
        key
        effect
        description
      }
      nodes {
        key
        type
        title
        simulated
        parameters
        template
        children
      }
      edges {
        from
        to
      }
      bindings {
        key
        status
        explicit
        reason
        requirement {
          capability
        }
        provider {
          resourceKey
          capability
        }
        subOperation {
          scenario
        }
        candidates {
          kind
          ref
          capability
          via
          accepted
          selected
          rank
          reason
          checks {
            key
            want
            got
            passed
            reason
          }
          policies {
            policy
            passed
            reason
          }
        }
        omittedCandidates
        omittedReasons
        rankedBelow
      }
      viewerMayStart {
        allowed
        reason
      }
      viewerMayEdit {
        allowed
        reason
      }
      customizations {
        changes {
          op
          node
          template
          actor
          revision
        }
      }
    }
  }
`);

const EditPlan = graphql(`
  mutation EditPlan($plan: ID!, $version: Int!, $changes: [PlanChangeInput!]!) {
    editPlan(input: { plan: $plan, version: $version, changes: $changes }) {
      id
      status
      revision
      version
    }
  }
`);

const StartOperation = graphql(`
  mutation StartOperation($plan: ID!, $key: String) {
    startOperation(input: { plan: $plan, idempotencyKey: $key }) {
      id
    }
  }
`);

type Plan = NonNullable<PlanReviewQuery["plan"]>;

// PlanReview shows a plan before it runs: every requirement's binding with
// each candidate and why it was accepted or rejected, the DAG, edits
// through node templates and parameters, and start.
export function PlanReview({ id }: { id: string }) {
  const { data, error, loading, refetch } = useQuery(PlanReviewDoc, { variables: { id } });
  const [start, started] = useMutation(StartOperation);
  // One key per page visit: a double click starts one operation.
  const [key] = useState(() => `console-${crypto.randomUUID()}`);
  if (loading && !data) return <p>Loading…</p>;
  if (error) return <p role="alert" className="error">{error.message}</p>;
  const plan = data?.plan;
  if (!plan) return <p role="alert">No such plan.</p>;
  const startable = plan.viewerMayStart;
  return (
    <section aria-labelledby="plan-title">
      <p><a href="#/plans">← Plans</a></p>
      <h2 id="plan-title">Plan: {plan.intent.action} {plan.intent.targetResourceType} <Status value={plan.status} /></h2>
      <p className="muted">{plan.scenarioRef} · revision {plan.revision} · {plan.summary.steps} steps · intent by {plan.intent.actor}</p>
      <dl className="simple">
        <dt>Desired result</dt><dd><KeyValues value={plan.intent.desiredResult} label="desired result" /></dd>
        <dt>Constraints</dt><dd><KeyValues value={plan.intent.constraints} label="constraints" /></dd>
        {plan.target && <><dt>Its resource</dt><dd><Status value={plan.target.effect}>{plan.target.effect.toLowerCase()}</Status> {plan.target.description}</dd></>}
      </dl>
      {plan.target && (plan.target.effect === "REAPPLY" || plan.target.effect === "REFUSED") && <p className="target" role="note">{plan.target.description}</p>}
      {plan.problems.length > 0 && <ul role="alert" className="error">{plan.problems.map((p) => <li key={p}>{p}</li>)}</ul>}
      <ReadOnlyNote />
      <ActionButton verdict={startable} busy={started.loading} onClick={async () => {
        const r = await start({ variables: { plan: plan.id, key } }).catch(() => null);
        if (r?.data) location.hash = `#/operations/${encodeURIComponent(r.data.startOperation.id)}`;
      }} kind="primary">Start operation</ActionButton>
      {started.error && <p role="alert" className="error">{started.error.message}</p>}
      <Bindings plan={plan} />
      <h3>DAG</h3>
      <Dag layoutKey={`${plan.id}@${plan.revision}`} nodes={plan.nodes} edges={plan.edges} height={360} label={`plan revision ${plan.revision}`}
        marks={(k) => ({ note: plan.nodes.find((n) => n.key === k)?.template ? "from a template" : undefined })} />
      <ClusterPreview key={`${plan.id}@${plan.version}`} plan={plan.id} />
      <EditForm plan={plan} templates={data.nodeTemplates} onEdited={() => void refetch()} />
      {plan.customizations.changes.length > 0 && (
        <>
          <h3>Edits so far</h3>
          <ol>{plan.customizations.changes.map((c, i) => <li key={i}><code>{c.op}</code> {c.node} {c.template && `(${c.template})`} by {c.actor} in revision {c.revision}</li>)}</ol>
        </>
      )}
    </section>
  );
}

// Bindings is the resolved capability graph as a reader checks it: each
// requirement, its provider (or the scenario that creates one) and why,
// every candidate with its constraint checks and policy verdicts.
function Bindings({ plan }: { plan: Plan }) {
  return (
    <section aria-labelledby="bindings-title">
      <h3 id="bindings-title">Capability graph: {plan.bindings.length} requirements</h3>
      {plan.bindings.map((b) => (
        <details key={b.key} className="binding" open={b.status !== "RESOLVED"}>
          <summary>
            <strong>{b.key}</strong> ({b.requirement.capability}) → {b.provider ? b.provider.resourceKey : b.subOperation ? `new, by ${b.subOperation.scenario}` : "unresolved"}
            {" "}<Status value={b.status} />{b.explicit && " · chosen explicitly"}
          </summary>
          <p>{b.reason}</p>
          <table>
            <caption>Candidates for {b.key}</caption>
            <thead><tr><th scope="col">Candidate</th><th scope="col">Verdict</th><th scope="col">Why</th><th scope="col">Checks</th><th scope="col">Policies</th></tr></thead>
            <tbody>
              {b.candidates.map((c) => (
                <tr key={`${c.kind}/${c.ref}`} className={c.selected ? "selected" : c.accepted ? "accepted" : "rejected"}>
                  <td>{c.ref}{c.via.length > 0 && <span className="muted"> via {c.via.join(" → ")}</span>}</td>
                  <td>{c.selected ? "selected" : c.accepted ? `accepted (rank ${c.rank ?? "?"})` : "rejected"}</td>
                  <td>{c.reason}</td>
                  <td><ul className="checks">{c.checks.map((k) => <li key={k.key} className={k.passed ? "passed" : "failed"}><span aria-hidden="true">{k.passed ? "✓" : "✗"}</span><span className="sr-only">{k.passed ? "passed" : "failed"}</span> {k.reason}</li>)}</ul></td>
                  <td><ul className="checks">{c.policies.map((p) => <li key={p.policy} className={p.passed ? "passed" : "failed"}><span aria-hidden="true">{p.passed ? "✓" : "✗"}</span><span className="sr-only">{p.passed ? "passed" : "failed"}</span> {p.reason}</li>)}</ul></td>
                </tr>
              ))}
            </tbody>
          </table>
          {(b.omittedCandidates > 0 || b.rankedBelow > 0) && (
            <p className="muted">{b.omittedCandidates} more rejected{b.omittedReasons && ` (${Object.entries(b.omittedReasons).map(([k, n]) => `${k}: ${n}`).join(", ")})`}; {b.rankedBelow} ranked below.</p>
          )}
        </details>
      ))}
    </section>
  );
}

const editOps: PlanChangeOp[] = ["INSERT_AFTER", "INSERT_BEFORE", "SET_PARAMETERS", "REMOVE"];

// EditForm edits a plan before it runs: insert a node from a template,
// set a node's parameters, remove a node — on the version shown (a
// concurrent edit is refused, CONFLICT).
function EditForm({ plan, templates, onEdited }: { plan: Plan; templates: { name: string; pack: string; parameters: string[] }[]; onEdited: () => void }) {
  const viewer = useViewer();
  const [edit, { error, loading, data }] = useMutation(EditPlan);
  const [op, setOp] = useState<PlanChangeOp>("INSERT_AFTER");
  const [node, setNode] = useState(plan.nodes[plan.nodes.length - 1]?.key ?? "");
  const [template, setTemplate] = useState(templates[0]?.name ?? "");
  const [params, setParams] = useState("");
  const verdict = plan.viewerMayEdit;
  if (!verdict.allowed && readOnly(viewer)) return null;
  let parsed: Record<string, unknown> | undefined;
  let bad = "";
  if (params.trim()) {
    try { parsed = JSON.parse(params); } catch (e) { bad = `parameters are not JSON: ${(e as Error).message}`; }
  }
  const inserts = op === "INSERT_AFTER" || op === "INSERT_BEFORE";
  const chosen = templates.find((t) => t.name === template);
  return (
    <form className="propose" aria-label="edit the plan" onSubmit={async (e) => {
      e.preventDefault();
      const change = { op, node, ...(inserts ? { template } : {}), ...(parsed ? { parameters: parsed } : {}) };
      const r = await edit({ variables: { plan: plan.id, version: plan.version, changes: [change] } }).catch(() => null);
      if (r?.data) onEdited();
    }}>
      <fieldset>
        <legend>Edit (revision {plan.revision}, version {plan.version})</legend>
        <label>Change <select aria-label="Change" value={op} onChange={(e) => setOp(e.target.value as PlanChangeOp)}>{editOps.map((o) => <option key={o} value={o}>{words(o)}</option>)}</select></label>
        <label>Node <select aria-label="Node" value={node} onChange={(e) => setNode(e.target.value)}>{plan.nodes.map((n) => <option key={n.key} value={n.key}>{n.title} ({n.key})</option>)}</select></label>
        {inserts && (
          <label>Template <select aria-label="Template" value={template} onChange={(e) => setTemplate(e.target.value)}>{templates.map((t) => <option key={`${t.pack}/${t.name}`} value={t.name}>{t.name} ({t.pack})</option>)}</select></label>
        )}
        <label>Parameters (JSON{chosen && chosen.parameters.length > 0 && inserts ? `: ${chosen.parameters.join(", ")}` : ""}) <input aria-label="Parameters (JSON)" value={params} onChange={(e) => setParams(e.target.value)} /></label>
        <span className="action">
          <button type="submit" disabled={!verdict.allowed || !!bad || loading}>Apply edit</button>
          {(!verdict.allowed || bad) && <span className="why">{bad || verdict.reason}</span>}
        </span>
      </fieldset>
      {data && <p role="status">Revision {data.editPlan.revision}: the plan is {data.editPlan.status.toLowerCase()}.</p>}
      {error && <p role="alert" className="error">{error.message}</p>}
    </form>
  );
}
