import { useEffect, useRef, useState } from "react";
import { useMutation, useQuery } from "@apollo/client/react";
import { graphql } from "./gql";
import { ActionButton, ReadOnlyNote, may, readOnly, useViewer, type Verdict } from "./viewer";
import { Status } from "./ui";

const NodeDetail = graphql(`
  query NodeDetail($id: ID!, $node: String!) {
    operation(id: $id) {
      id
      plan {
        id
        node(key: $node) {
          key
          type
          title
          simulated
          description
          parameters
          job {
            run {
              runner
              timeout
            }
            inputs {
              parameters
            }
            outputs {
              evidence {
                name
              }
              artifacts {
                name
                type
                sensitivity
              }
            }
            controls {
              retry {
                maximumAttempts
              }
            }
          }
          intervention {
            instructions
          }
        }
      }
      nodeRuns {
        node
        status
        attempts
        error
      }
      gates {
        node
        status
        spec {
          reason
          requiredRoles
          approvals
        }
        decisions {
          actor
          role
          approve
          comment
          dismissed
        }
        viewerMayApprove {
          allowed
          reason
        }
        viewerMayReject {
          allowed
          reason
        }
      }
      evidence {
        id
        producedBy
        capability
        item
        result
        source
        simulated
        observedAt
      }
      artifacts {
        id
        name
        type
        sensitivity
        producedBy
        viewerMayReveal {
          allowed
          reason
        }
      }
      interventions {
        id
        type
        actor
        targetNode
        note
        at
      }
    }
  }
`);

const DecideGate = graphql(`
  mutation DecideGate($op: ID!, $node: String!, $approve: Boolean!, $comment: String) {
    decideGate(input: { operation: $op, node: $node, approve: $approve, comment: $comment }) {
      node
      status
    }
  }
`);

const RevealSecret = graphql(`
  mutation RevealSecret($artifact: ID!, $reason: String!) {
    revealSecret(input: { artifact: $artifact, reason: $reason }) {
      value
      expiresAt
    }
  }
`);

const RetryNode = graphql(`
  mutation RetryNode($op: ID!, $node: String!) {
    retryNode(input: { operation: $op, node: $node }) {
      id
      status
    }
  }
`);

const RecordIntervention = graphql(`
  mutation RecordIntervention($op: ID!, $node: String!, $type: String!, $note: String!) {
    recordIntervention(input: { operation: $op, node: $node, type: $type, note: $note }) {
      id
    }
  }
`);

// NodeDrawer shows one node of an operation: its job contract, evidence,
// artifacts (secret ones masked; revealed with a reason where policy
// allows), its gate, interventions, and the actions the viewer may take —
// each as the server judges it (viewerMay… fields, Viewer.permissions).
export function NodeDrawer({ operation, node, runStatus, children, events, onClose }: {
  operation: string; node: string; runStatus?: string; events: number; onClose: () => void;
  // children are a stage's nodes with their statuses (a stage has no run).
  children?: { key: string; title: string; status?: string }[];
}) {
  const { data, error, refetch } = useQuery(NodeDetail, { variables: { id: operation, node }, fetchPolicy: "cache-and-network" });
  const viewer = useViewer();
  const heading = useRef<HTMLHeadingElement>(null);
  // Focus moves into the drawer when it opens and back to what opened it
  // when it closes.
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    return () => opener?.focus?.();
  }, []);
  useEffect(() => { heading.current?.focus(); }, [data !== undefined]); // eslint-disable-line react-hooks/exhaustive-deps
  // An event about this node (a decision, its run, evidence): read its
  // records again (not on mount: the query just read them).
  const seen = useRef(events);
  useEffect(() => {
    if (seen.current === events) return;
    seen.current = events;
    void refetch();
  }, [events, refetch]);
  const op = data?.operation;
  const spec = op?.plan.node;
  if (error && !op) return <aside className="drawer" role="dialog" aria-label="node"><p role="alert" className="error">{error.message}</p><button type="button" className="close" onClick={onClose} aria-label="close">×</button></aside>;
  if (!op || !spec) return null;
  const run = op.nodeRuns.find((r) => r.node === node);
  const gate = op.gates.find((g) => g.node === node);
  const evidence = op.evidence.filter((e) => e.producedBy === node);
  // One line per artifact name: each attempt leaves its own, and the
  // last one is what the node's outputs are now.
  const produced = op.artifacts.filter((a) => a.producedBy === node);
  const artifacts = [...new Map(produced.map((a) => [a.name, a])).values()];
  const earlier = (name: string) => produced.filter((a) => a.name === name).length - 1;
  const maxAttempts = spec.job?.controls.retry.maximumAttempts ?? 1;
  const interventions = op.interventions.filter((i) => i.targetNode === node);
  return (
    <aside className="drawer" role="dialog" aria-labelledby="drawer-title" onKeyDown={(e) => { if (e.key === "Escape") onClose(); }}>
      <h3 id="drawer-title" tabIndex={-1} ref={heading}>{spec.title}</h3>
      <button type="button" className="close" onClick={onClose} aria-label="close">×</button>
      <p><code>{spec.key}</code> · {spec.type.toLowerCase()} · <Status value={runStatus ?? run?.status ?? "PENDING"} />
        {run && run.attempts > 1 && ` · attempt ${run.attempts}`}</p>
      {children && (
        <section aria-label="stage">
          <h4>Its {children.length} steps</h4>
          <ul className="plain">{children.map((c) => <li key={c.key}><Status value={c.status ?? "PENDING"} /> {c.title} <code>{c.key}</code></li>)}</ul>
        </section>
      )}
      {spec.simulated && <p className="sim-note" role="note"><strong>Simulated</strong>: this step runs the simulator; it changes and proves nothing real.</p>}
      {spec.description && <p>{spec.description}</p>}
      {run?.error && <p className="error">{run.error}</p>}
      <ReadOnlyNote />
      {spec.job && (
        <section aria-label="job contract">
          <h4>Job contract</h4>
          <p>Runs with <strong>{spec.job.run.runner}</strong>{spec.job.run.timeout && `, timeout ${spec.job.run.timeout}`}; its retry policy makes up to {maxAttempts} {maxAttempts === 1 ? "attempt" : "attempts"} on its own.
            {run && run.attempts > maxAttempts && ` This is attempt ${run.attempts}: past the policy's, each retry by a patch or a person is one more attempt.`}</p>
          <p>Inputs: {Object.keys(spec.job.inputs.parameters ?? {}).join(", ") || "none"} · Evidence it owes: {spec.job.outputs.evidence.length ? spec.job.outputs.evidence.map((p) => p.name).join(", ") : "none"}</p>
          {spec.job.outputs.artifacts.length > 0 && <p>Artifacts it leaves: {spec.job.outputs.artifacts.map((a) => `${a.name} (${a.sensitivity})`).join(", ")}</p>}
        </section>
      )}
      {gate && <GateSection operation={operation} gate={gate} onDecided={() => void refetch()} />}
      {run?.status === "FAILED" && <RetrySection operation={operation} node={node} verdict={may(viewer, "RETRY_NODE")} />}
      {(run?.status === "WAITING_INTERVENTION" || runStatus === "WAITING_INTERVENTION") && (
        <InterventionForm operation={operation} node={node} instructions={spec.intervention?.instructions}
          verdict={may(viewer, "RECORD_INTERVENTION")} onDone={() => void refetch()} />
      )}
      <h4>Evidence</h4>
      <ul>
        {evidence.length ? evidence.map((e) => (
          <li key={e.id}>
            <strong>{e.item}</strong>: <Status value={e.result} />
            {e.capability && ` (${e.capability})`} · source <code>{sourceOf(e.source)}</code>{e.simulated && <em className="sim-mark"> · simulated, nothing checked</em>}
          </li>
        )) : <li>none yet</li>}
      </ul>
      <h4>Artifacts</h4>
      <ul>
        {artifacts.length ? artifacts.map((a) => <ArtifactItem key={a.id} artifact={a} earlier={earlier(a.name)} />) : <li>none</li>}
      </ul>
      {interventions.length > 0 && (
        <>
          <h4>Interventions</h4>
          <ul>{interventions.map((i) => <li key={i.id}>{i.actor}: {i.type} — {i.note}</li>)}</ul>
        </>
      )}
    </aside>
  );
}

function sourceOf(source: Record<string, unknown>): string {
  const kind = source.kind ?? source.type ?? source.runner;
  return kind ? String(kind) : JSON.stringify(source).slice(0, 80);
}

type GateView = {
  node: string; status: string; spec: { reason: string; requiredRoles: string[]; approvals?: number | null };
  decisions: { actor: string; role: string; approve: boolean; comment?: string | null; dismissed: boolean }[];
  viewerMayApprove: Verdict; viewerMayReject: Verdict;
};

function GateSection({ operation, gate, onDecided }: { operation: string; gate: GateView; onDecided: () => void }) {
  const [decide, { error, loading }] = useMutation(DecideGate);
  const [comment, setComment] = useState("");
  const [done, setDone] = useState<string | null>(null);
  const viewer = useViewer();
  const act = async (approve: boolean) => {
    const r = await decide({ variables: { op: operation, node: gate.node, approve, comment: comment || null } }).catch(() => null);
    if (r?.data) {
      setDone(`${approve ? "approved" : "rejected"}: the gate is ${r.data.decideGate.status.toLowerCase()}`);
      onDecided();
    }
  };
  return (
    <section aria-label="gate">
      <h4>Gate: {gate.status.toLowerCase()}</h4>
      <p>{gate.spec.reason}</p>
      <p>Decided by one of {gate.spec.requiredRoles.join(", ")}{(gate.spec.approvals ?? 1) > 1 && `, ${gate.spec.approvals} approvals`}.</p>
      <p>Decisions: {gate.decisions.length ? gate.decisions.map((d) => `${d.actor} (${d.role}) ${d.approve ? "approved" : "rejected"}${d.dismissed ? " — dismissed by a patch" : ""}${d.comment ? `: ${d.comment}` : ""}`).join("; ") : "none yet"}</p>
      {!readOnly(viewer) && gate.status === "WAITING" && (
        <label>Comment <input aria-label="Comment" value={comment} onChange={(e) => setComment(e.target.value)} /></label>
      )}
      <ActionButton verdict={gate.viewerMayApprove} busy={loading} onClick={() => void act(true)} kind="primary">Approve</ActionButton>
      <ActionButton verdict={gate.viewerMayReject} busy={loading} onClick={() => void act(false)} kind="danger">Reject</ActionButton>
      {done && <p role="status">{done}</p>}
      {error && <p role="alert" className="error">{error.message}</p>}
    </section>
  );
}

function RetrySection({ operation, node, verdict }: { operation: string; node: string; verdict: Verdict }) {
  const [retry, { error, loading, data }] = useMutation(RetryNode);
  return (
    <section aria-label="retry">
      <ActionButton verdict={verdict} busy={loading} onClick={() => { retry({ variables: { op: operation, node } }).catch(() => {}); }}>Retry node</ActionButton>
      {data && <p role="status">Retrying: the operation is {data.retryNode.status.toLowerCase()}.</p>}
      {error && <p role="alert" className="error">{error.message}</p>}
    </section>
  );
}

// InterventionForm records a manual fix (manually_fixed: the one type that
// changes a node); the node's verification then runs again (invariant 8).
function InterventionForm({ operation, node, instructions, verdict, onDone }: { operation: string; node: string; instructions?: string; verdict: Verdict; onDone: () => void }) {
  const [record, { error, loading, data }] = useMutation(RecordIntervention);
  const type = "manually_fixed";
  const [note, setNote] = useState("");
  const viewer = useViewer();
  if (readOnly(viewer)) return null;
  return (
    <section aria-label="intervention">
      <h4>Record an intervention</h4>
      {instructions && <p>{instructions}</p>}
      <label>What was done <input aria-label="What was done" value={note} onChange={(e) => setNote(e.target.value)} /></label>
      <ActionButton verdict={note.trim() ? verdict : { allowed: false, reason: "say what was done" }} busy={loading}
        onClick={() => { record({ variables: { op: operation, node, type, note } }).then(onDone, () => {}); }}>Record</ActionButton>
      {data && <p role="status">Recorded; the node's verification runs again.</p>}
      {error && <p role="alert" className="error">{error.message}</p>}
    </section>
  );
}

// revealWindow is capstan.RevealWindow: how long a revealed value may
// stay on screen.
const revealWindow = 5 * 60 * 1000;

type ArtifactView = { id: string; name: string; type: string; sensitivity: string; viewerMayReveal: Verdict };

// ArtifactItem shows an artifact; a secret one is masked, and revealed
// (where policy allows) only after the viewer gives a reason — recorded in
// the timeline — for the five minutes the server allows, then masked again.
function ArtifactItem({ artifact, earlier }: { artifact: ArtifactView; earlier: number }) {
  // The value is never written to Apollo's cache, and the hook forgets it
  // when it is hidden.
  const [reveal, { error, loading, reset }] = useMutation(RevealSecret, { fetchPolicy: "no-cache" });
  const [asking, setAsking] = useState(false);
  const [reason, setReason] = useState("");
  const [shown, setShown] = useState<{ value: string; until: number } | null>(null);
  const hide = () => { setShown(null); reset(); };
  useEffect(() => {
    if (!shown) return;
    const t = setTimeout(hide, Math.max(0, shown.until - Date.now()));
    return () => clearTimeout(t);
  }, [shown]); // eslint-disable-line react-hooks/exhaustive-deps
  const secret = artifact.sensitivity === "secret";
  return (
    <li>
      {artifact.name} ({artifact.type}, {artifact.sensitivity}){earlier > 0 && <span className="muted"> · the latest attempt's; {earlier} earlier</span>}
      {secret && !shown && <> · <span aria-label="masked secret">••••••••</span></>}
      {secret && shown && <> · <code aria-label="revealed secret">{shown.value}</code> <button type="button" onClick={hide}>Hide</button></>}
      {secret && !shown && !asking && (
        <ActionButton verdict={artifact.viewerMayReveal} onClick={() => setAsking(true)}>Reveal…</ActionButton>
      )}
      {asking && !shown && (
        <form onSubmit={async (e) => {
          e.preventDefault();
          const r = await reveal({ variables: { artifact: artifact.id, reason } }).catch(() => null);
          if (r?.data) {
            // Shown for the reveal window, timed from now by this clock
            // (expiresAt is the server's clock: a skewed one would cut or
            // stretch it).
            setShown({ value: r.data.revealSecret.value, until: Date.now() + revealWindow });
            setAsking(false);
            setReason("");
          }
        }}>
          <label>Why do you need it? (recorded) <input aria-label="Why do you need it? (recorded)" value={reason} onChange={(e) => setReason(e.target.value)} minLength={3} maxLength={500} required /></label>
          <button type="submit" disabled={loading}>Reveal</button>
          <button type="button" onClick={() => setAsking(false)}>Cancel</button>
        </form>
      )}
      {error && <p role="alert" className="error">{error.message}</p>}
    </li>
  );
}
