import { useLazyQuery } from "@apollo/client/react";
import { graphql } from "./gql";

const PlanClusterPreview = graphql(`
  query PlanClusterPreview($id: ID!) {
    plan(id: $id) {
      id
      clusterPreview {
        node
        cluster
        object
        action
        changes {
          path
          old
          new
        }
        error
      }
    }
  }
`);

const shown = (v: unknown) => (v === null || v === undefined ? "—" : typeof v === "string" ? v : JSON.stringify(v));

// ClusterPreview shows what the plan's kubernetes steps would change on
// their clusters: a server-side dry run of each object, asked for with a
// button because it reaches the clusters (nothing is written).
export function ClusterPreview({ plan }: { plan: string }) {
  const [ask, { data, error, loading }] = useLazyQuery(PlanClusterPreview, { fetchPolicy: "network-only" });
  const objects = data?.plan?.clusterPreview;
  return (
    <section aria-labelledby="preview-title">
      <h3 id="preview-title">Cluster changes</h3>
      <p>
        <button type="button" disabled={loading} onClick={() => void ask({ variables: { id: plan } })}>
          {objects ? "Preview again" : "Preview cluster changes"}
        </button>{" "}
        <span className="muted">a server-side dry run of each object the plan's kubernetes steps apply: nothing is written</span>
      </p>
      {error && <p role="alert" className="error">{error.message}</p>}
      {objects && objects.length === 0 && <p role="status">This plan applies nothing to a cluster.</p>}
      {objects && objects.length > 0 && (
        <table aria-label="cluster changes">
          <thead><tr><th scope="col">Step</th><th scope="col">Object</th><th scope="col">Would be</th><th scope="col">Fields</th></tr></thead>
          <tbody>
            {objects.map((o, i) => (
              <tr key={`${o.node}/${o.object}/${i}`} className={o.error ? "rejected" : undefined}>
                <td>{o.node}</td>
                <td>{o.object || o.cluster}<span className="muted"> on {o.cluster}</span></td>
                <td>{o.error ? <span className="error">{o.error}</span> : o.action}</td>
                <td>
                  <ul className="checks">
                    {o.changes.map((c) => <li key={c.path}><code>{c.path}</code>: {shown(c.old)} → {shown(c.new)}</li>)}
                  </ul>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
