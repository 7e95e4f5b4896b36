import { useQuery, useSubscription } from "@apollo/client/react";
import { graphql } from "./gql";
import { Status } from "./ui";

const DriftedResources = graphql(`
  query DriftedResources {
    resources(filter: { health: [DRIFTED, UNREACHABLE, DEGRADED] }, first: 20) {
      totalCount
      edges {
        node {
          id
          key
          environment
          healthStatus
          assessment {
            at
            reason
            diff {
              field
            }
          }
        }
      }
    }
  }
`);

const ResourceHealthLive = graphql(`
  subscription ResourceHealthLive {
    resourceHealth {
      id
      healthStatus
    }
  }
`);

// DriftPanel lists, on the dashboard, the resources whose last health
// assessment found them drifted, unreachable or degraded: each with why
// and a link to the explorer, where a repair is planned. It reads the
// list again whenever an assessment changes a resource's health
// (resourceHealth), and every 30 s should the live feed be lost.
export function DriftPanel() {
  const { data, error, refetch } = useQuery(DriftedResources, { pollInterval: 30000, fetchPolicy: "cache-and-network" });
  useSubscription(ResourceHealthLive, { fetchPolicy: "no-cache", ignoreResults: true, onData: () => void refetch() });
  if (error) return <p role="alert" className="error">{error.message}</p>;
  const rows = data?.resources.edges.map((e) => e.node) ?? [];
  return (
    <section aria-label="drift" className="drift-panel">
      <h3>Needs repair ({data?.resources.totalCount ?? 0})</h3>
      {rows.length === 0 ? <p className="muted">Every assessed resource matches its desired state.</p> : (
        <ul aria-label="drifted resources">
          {rows.map((r) => (
            <li key={r.id}>
              <Status value={r.healthStatus} />{" "}
              <a href={`#/explorer/${encodeURIComponent(r.id)}`}>{r.key}</a> <span className="muted">{r.environment}</span>
              {r.assessment && <> · {r.assessment.reason}{r.assessment.diff.length > 0 && ` (${r.assessment.diff.map((d) => d.field).join(", ")})`} · <time dateTime={r.assessment.at}>{new Date(r.assessment.at).toLocaleTimeString()}</time></>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
