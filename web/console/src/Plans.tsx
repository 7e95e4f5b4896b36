import { useState } from "react";
import { useMutation, useQuery } from "@apollo/client/react";
import { graphql } from "./gql";
import { KeyValues, Status } from "./ui";
import type { IntentMode } from "./gql/graphql";
import { ActionButton, may, readOnly, useViewer } from "./viewer";

const IntentsQuery = graphql(`
  query Intents($after: String) {
    intents(first: 100, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          action
          targetResourceType
          desiredResult
          status
          actor
          createdAt
          latestPlan {
            id
            status
            revision
          }
        }
      }
    }
  }
`);

const CreateIntent = graphql(`
  mutation CreateIntent($input: CreateIntentInput!) {
    createIntent(input: $input) {
      id
    }
  }
`);

const PlanIntent = graphql(`
  mutation PlanIntent($intent: ID!) {
    planIntent(input: { intent: $intent }) {
      id
      status
    }
  }
`);

// Plans lists the organization's intents with their latest plan (newest
// first), and submits a new intent: it is planned at once and its plan
// opens for review.
export function Plans() {
  const { data, error, fetchMore } = useQuery(IntentsQuery, { variables: {}, fetchPolicy: "cache-and-network" });
  if (error) return <p role="alert" className="error">{error.message}</p>;
  const edges = [...(data?.intents.edges ?? [])].sort((a, b) => b.node.createdAt.localeCompare(a.node.createdAt));
  return (
    <section aria-labelledby="plans-title">
      <h2 id="plans-title">Plans</h2>
      <NewIntent />
      <table>
        <caption>{data?.intents.totalCount ?? 0} intents</caption>
        <thead><tr><th scope="col">Intent</th><th scope="col">Status</th><th scope="col">Latest plan</th><th scope="col">By</th></tr></thead>
        <tbody>
          {edges.map(({ node: i }) => (
            <tr key={i.id}>
              <td>{i.action} {i.targetResourceType} <KeyValues value={i.desiredResult} label="desired result" /></td>
              <td><Status value={i.status} /></td>
              <td>{i.latestPlan ? <a href={`#/plans/${encodeURIComponent(i.latestPlan.id)}`}><Status value={i.latestPlan.status} /> · revision {i.latestPlan.revision}</a> : "not planned"}</td>
              <td>{i.actor}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {data?.intents.pageInfo.hasNextPage && (
        <button type="button" onClick={() => void fetchMore({
          variables: { after: data.intents.pageInfo.endCursor },
          updateQuery: (prev, { fetchMoreResult }) => ({ intents: { ...fetchMoreResult.intents, edges: [...prev.intents.edges, ...fetchMoreResult.intents.edges] } }),
        })}>More</button>
      )}
    </section>
  );
}

function NewIntent() {
  const viewer = useViewer();
  const [create, created] = useMutation(CreateIntent);
  const [plan, planned] = useMutation(PlanIntent);
  const [action, setAction] = useState("install");
  const [type, setType] = useState("");
  const [desired, setDesired] = useState('{"name": ""}');
  const [constraints, setConstraints] = useState('{"environment": "staging"}');
  const [mode, setMode] = useState<IntentMode>("SIMPLE");
  if (readOnly(viewer)) return null;
  let bad = "";
  const parse = (what: string, text: string) => {
    try { return text.trim() ? JSON.parse(text) : null; } catch { bad = `${what} is not JSON`; return null; }
  };
  const desiredResult = parse("the desired result", desired);
  const cons = parse("the constraints", constraints);
  const verdict = bad ? { allowed: false, reason: bad } : !type ? { allowed: false, reason: "name a resource type" } : may(viewer, "CREATE_INTENT");
  return (
    <form className="propose" aria-label="new intent" onSubmit={(e) => e.preventDefault()}>
      <fieldset>
        <legend>New intent</legend>
        <label>Action <input aria-label="Action" value={action} onChange={(e) => setAction(e.target.value)} /></label>
        <label>Resource type <input aria-label="Resource type" value={type} onChange={(e) => setType(e.target.value)} placeholder="minio.instance" /></label>
        <label>Desired result (JSON) <input aria-label="Desired result (JSON)" value={desired} onChange={(e) => setDesired(e.target.value)} /></label>
        <label>Constraints (JSON) <input aria-label="Constraints (JSON)" value={constraints} onChange={(e) => setConstraints(e.target.value)} /></label>
        <label>Mode <select aria-label="Mode" value={mode} onChange={(e) => setMode(e.target.value as IntentMode)}>
          <option value="SIMPLE">simple (parameters only)</option>
          <option value="ADVANCED">advanced (the DAG may be edited)</option>
        </select></label>
        <ActionButton verdict={verdict} busy={created.loading || planned.loading} onClick={async () => {
          const c = await create({ variables: { input: { action, targetResourceType: type, desiredResult, constraints: cons, mode } } });
          if (!c.data) return;
          const p = await plan({ variables: { intent: c.data.createIntent.id } });
          if (p.data) location.hash = `#/plans/${encodeURIComponent(p.data.planIntent.id)}`;
        }}>Plan it</ActionButton>
      </fieldset>
      {(created.error ?? planned.error) && <p role="alert" className="error">{(created.error ?? planned.error)!.message}</p>}
    </form>
  );
}
