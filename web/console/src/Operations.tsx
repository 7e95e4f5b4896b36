import { useMemo, useState } from "react";
import { useQuery, useSubscription } from "@apollo/client/react";
import { graphql, useFragment as readFragment } from "./gql";
import type { OperationRowFragment, OperationStatus } from "./gql/graphql";

const OperationsQuery = graphql(`
  query Operations($filter: OperationFilter) {
    operations(filter: $filter, first: 100) {
      totalCount
      edges {
        node {
          ...OperationRow
        }
      }
    }
  }
`);

const OperationRow = graphql(`
  fragment OperationRow on Operation {
    id
    action
    status
    actor
    createdAt
    resource {
      key
    }
    progress {
      currentPhase
      progress
      needsAttention
      patchesAwaitingApproval
    }
  }
`);

// Every change of an operation of the organization arrives here; Apollo's
// cache updates the row by its id.
const OperationsLive = graphql(`
  subscription OperationsLive {
    operations {
      ...OperationRow
    }
  }
`);

const statuses: OperationStatus[] = ["PENDING", "RUNNING", "WAITING", "SUCCEEDED", "FAILED", "CANCELLING", "CANCELLED", "ROLLING_BACK", "ROLLED_BACK"];

type Row = OperationRowFragment;

// needsAttention ranks an operation: gates and patches waiting for a
// person and failures first, then what runs, then what ended.
export function needsAttention(r: Row): number {
  if (r.progress.needsAttention.length > 0 || r.progress.patchesAwaitingApproval > 0 || r.status === "WAITING") return 0;
  if (r.status === "FAILED") return 1;
  if (r.status === "RUNNING" || r.status === "PENDING" || r.status === "CANCELLING" || r.status === "ROLLING_BACK") return 2;
  return 3;
}

// Operations is the dashboard: every operation of the organization, live,
// needs-attention first, filtered by status.
export function Operations() {
  const [status, setStatus] = useState<OperationStatus | "">("");
  const filter = status ? { status } : undefined;
  const { data, loading, error, refetch } = useQuery(OperationsQuery, { variables: { filter } });
  useSubscription(OperationsLive, {
    onData: ({ data: live }) => {
      const id = live.data ? readFragment(OperationRow, live.data.operations).id : undefined;
      const known = data?.operations.edges.some((e) => readFragment(OperationRow, e.node).id === id);
      if (id && !known) void refetch(); // a new operation: the page gains a row
    },
  });
  const rows = useMemo(() => {
    const list = (data?.operations.edges ?? []).map((e) => readFragment(OperationRow, e.node));
    return [...list].sort((a, b) => needsAttention(a) - needsAttention(b) || b.createdAt.localeCompare(a.createdAt));
  }, [data]);
  return (
    <section aria-labelledby="operations-title">
      <h2 id="operations-title">Operations</h2>
      <label>
        Status{" "}
        <select value={status} onChange={(e) => setStatus(e.target.value as OperationStatus | "")}>
          <option value="">any</option>
          {statuses.map((s) => (
            <option key={s} value={s}>{s.toLowerCase()}</option>
          ))}
        </select>
      </label>
      {loading && <p>Loading…</p>}
      {error && <p role="alert" className="error">{error.message}</p>}
      <table>
        <thead>
          <tr><th scope="col">Operation</th><th scope="col">Status</th><th scope="col">Phase</th><th scope="col">Progress</th><th scope="col">Needs attention</th><th scope="col">By</th></tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-status={r.status}>
              <td><a href={`#/operations/${encodeURIComponent(r.id)}`}>{r.action} {r.resource?.key ?? ""}</a></td>
              <td><span className={`status status-${r.status.toLowerCase()}`}>{r.status}</span></td>
              <td>{r.progress.currentPhase}</td>
              <td><progress max={1} value={r.progress.progress} aria-label="progress" /></td>
              <td>{r.progress.needsAttention.join("; ")}</td>
              <td>{r.actor}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p>{plural(data?.operations.totalCount ?? 0, "operation")}</p>
    </section>
  );
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
