import { useState } from "react";
import { useMutation, useQuery } from "@apollo/client/react";
import { graphql } from "./gql";

const NodeDetail = graphql(`
  query NodeDetail($id: ID!) {
    viewer {
      actor
      roles
    }
    operation(id: $id) {
      id
      actor
      intent {
        constraints
      }
      plan {
        nodes {
          key
          type
          title
          job {
            run {
              runner
            }
            controls {
              retry {
                maximumAttempts
              }
            }
          }
        }
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
        }
      }
      evidence {
        id
        producedBy
        item
        result
      }
      artifacts {
        id
        name
        type
        sensitivity
        producedBy
      }
    }
  }
`);

const DecideGate = graphql(`
  mutation DecideGate($op: ID!, $node: String!, $approve: Boolean!) {
    decideGate(input: { operation: $op, node: $node, approve: $approve }) {
      node
      status
    }
  }
`);

// mayDecide says whether the viewer may decide a gate, or why not: one of
// its required roles (admin holds every role), and not twice.
// In production the person who started the operation does not approve its
// gates: a second person does.
export function mayDecide(
  roles: string[], actor: string, starter: string, prod: boolean,
  gate: { status: string; spec: { requiredRoles: string[] }; decisions: { actor: string }[] },
): string | null {
  if (gate.status !== "WAITING") return `the gate is ${gate.status.toLowerCase()}`;
  if (!roles.includes("admin") && !gate.spec.requiredRoles.some((r) => roles.includes(r))) return `needs one of the roles ${gate.spec.requiredRoles.join(", ")}`;
  if (gate.decisions.some((d) => d.actor === actor)) return "you decided it already";
  if (prod && actor === starter) return "you started this production operation: a second person decides its gates";
  return null;
}

// NodeDrawer shows one node of an operation: its job contract, evidence,
// artifacts (secret ones masked) and gate, with approve and reject for
// those who may.
export function NodeDrawer({ operation, node, onClose }: { operation: string; node: string; onClose: () => void }) {
  const { data } = useQuery(NodeDetail, { variables: { id: operation }, fetchPolicy: "cache-and-network" });
  const [decide, { error: decideError, loading: deciding }] = useMutation(DecideGate);
  const [done, setDone] = useState<string | null>(null);
  const op = data?.operation;
  const spec = op?.plan.nodes.find((n) => n.key === node);
  if (!op || !spec || !data) return null;
  const gate = op.gates.find((g) => g.node === node);
  const evidence = op.evidence.filter((e) => e.producedBy === node);
  const artifacts = op.artifacts.filter((a) => a.producedBy === node);
  const env = (op.intent.constraints as Record<string, unknown> | null)?.environment;
  const refusal = gate ? mayDecide(data.viewer.roles, data.viewer.actor, op.actor, env === "prod" || env === "production", gate) : null;
  const act = async (approve: boolean) => {
    const r = await decide({ variables: { op: operation, node, approve } });
    if (r.data) setDone(`${approve ? "approved" : "rejected"}: the gate is ${r.data.decideGate.status.toLowerCase()}`);
  };
  return (
    <aside className="drawer" role="dialog" aria-labelledby="drawer-title">
      <h3 id="drawer-title">{spec.title}</h3>
      <button type="button" onClick={onClose} aria-label="close">×</button>
      <p><code>{spec.key}</code> · {spec.type.toLowerCase()}</p>
      {spec.job && (
        <p>Runs with <strong>{spec.job.run.runner}</strong>, at most {spec.job.controls.retry.maximumAttempts ?? 1} attempts.</p>
      )}
      {gate && (
        <section aria-label="gate">
          <h4>Gate: {gate.status.toLowerCase()}</h4>
          <p>{gate.spec.reason}</p>
          <p>Decisions: {gate.decisions.length ? gate.decisions.map((d) => `${d.actor} (${d.role}) ${d.approve ? "approved" : "rejected"}`).join("; ") : "none yet"}</p>
          <button type="button" disabled={refusal !== null || deciding} title={refusal ?? ""} onClick={() => act(true)}>Approve</button>
          <button type="button" disabled={refusal !== null || deciding} title={refusal ?? ""} onClick={() => act(false)}>Reject</button>
          {refusal && <p className="why">You may not decide it: {refusal}.</p>}
          {done && <p role="status">{done}</p>}
          {decideError && <p role="alert" className="error">{decideError.message}</p>}
        </section>
      )}
      <h4>Evidence</h4>
      <ul>{evidence.length ? evidence.map((e) => <li key={e.id}>{e.item}: {e.result.toLowerCase()}</li>) : <li>none yet</li>}</ul>
      <h4>Artifacts</h4>
      <ul>
        {artifacts.length ? artifacts.map((a) => (
          <li key={a.id}>{a.name} ({a.type}, {a.sensitivity}){a.sensitivity === "secret" && <> · <span aria-label="masked secret">••••••••</span></>}</li>
        )) : <li>none</li>}
      </ul>
    </aside>
  );
}
