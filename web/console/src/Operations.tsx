import { useEffect, useMemo, useRef, useState } from "react";
import { useApolloClient, useSubscription } from "@apollo/client/react";
import { DriftPanel } from "./Drift";
import { useVirtualizer } from "@tanstack/react-virtual";
import { graphql, useFragment as readFragment } from "./gql";
import { ResourceByKey } from "./queries";
import { Status, StatusLegend, words } from "./ui";
import type { OperationFilter, OperationRowFragment, OperationStatus, OperationsQuery as OperationsQueryResult, OperationsQueryVariables } from "./gql/graphql";

const OperationsQuery = graphql(`
  query Operations($filter: OperationFilter, $after: String) {
    operations(filter: $filter, first: 100, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
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
    version
    action
    status
    actor
    createdAt
    resource {
      id
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

// Every change of an operation of the organization that a list shows.
// The dashboard subscribes without a filter and filters itself: a row that
// stops matching (a RUNNING one that succeeded, under "running") must
// leave, and the server sends only what matches.
const OperationsLive = graphql(`
  subscription OperationsLive {
    operations {
      ...OperationRow
    }
  }
`);

const statuses: OperationStatus[] = ["PENDING", "RUNNING", "WAITING", "SUCCEEDED", "FAILED", "CANCELLING", "CANCELLED", "ROLLING_BACK", "ROLLED_BACK"];
const windows: { label: string; hours: number }[] = [{ label: "any time", hours: 0 }, { label: "last hour", hours: 1 }, { label: "last day", hours: 24 }, { label: "last week", hours: 168 }];

type Row = OperationRowFragment;

// matches applies the dashboard's filter to a live row.
function matches(r: Row, f: OperationFilter): boolean {
  if (f.status && r.status !== f.status) return false;
  if (f.resource && r.resource?.id !== f.resource) return false;
  if (f.createdAfter && r.createdAt < f.createdAfter) return false;
  return true;
}

// newer says whether a row read later should replace one read earlier:
// versions only grow, so a list read and a live change arriving in either
// order end on the later one.
function newer(next: Row, prev: Row | undefined): boolean {
  return !prev || next.version >= prev.version;
}

// needsAttention ranks an operation: gates and patches waiting for a
// person and failures first, then what runs, then what ended.
export function needsAttention(r: Row): number {
  if (r.progress.needsAttention.length > 0 || r.progress.patchesAwaitingApproval > 0 || r.status === "WAITING") return 0;
  if (r.status === "FAILED") return 1;
  if (r.status === "RUNNING" || r.status === "PENDING" || r.status === "CANCELLING" || r.status === "ROLLING_BACK") return 2;
  return 3;
}

const rowHeight = 36;

// Operations is the dashboard: every operation of the organization (read
// page by page), live, needs-attention first, filtered by status,
// resource and time. The rows live in the component, not in Apollo's
// cache: a hundred live changes a second are applied once per animation
// frame (one sort, one render), and rows are virtualized, so a thousand
// operations cost the DOM of the thirty in view. A lost connection ends
// the live feed; the dashboard reads the list again and follows anew.
export function Operations() {
  const client = useApolloClient();
  const [status, setStatus] = useState<OperationStatus | "">("");
  const [resourceKey, setResourceKey] = useState("");
  const [resource, setResource] = useState<{ key: string; id: string | null } | null>(null);
  const [hours, setHours] = useState(0);
  // The window's start is fixed when chosen, so the filter stays the same
  // while the dashboard is open.
  const since = useMemo(() => (hours ? new Date(Date.now() - hours * 3600_000).toISOString() : null), [hours]);
  const filter: OperationFilter = useMemo(
    () => ({ ...(status ? { status } : {}), ...(resource?.id ? { resource: resource.id } : {}), ...(since ? { createdAfter: since } : {}) }),
    [status, resource, since]);
  const filterRef = useRef(filter);
  filterRef.current = filter;
  const unknownResource = resource !== null && resource.id === null;
  const [list, setList] = useState<{ rows: Map<string, Row>; total: number; loading: boolean; error?: string }>({ rows: new Map(), total: 0, loading: true });
  const [reads, setReads] = useState(0); // bumped to read the list again
  // Live changes seen since the list began to be read: merged over what
  // the read returns (the read and the feed are not ordered).
  const seenLive = useRef(new Map<string, Row>());
  // Read every page: the dashboard shows every operation.
  useEffect(() => {
    if (unknownResource) return;
    let current = true;
    seenLive.current = new Map();
    setList((l) => ({ ...l, loading: true }));
    (async () => {
      const rows = new Map<string, Row>();
      let after: string | null = null;
      let total = 0;
      do {
        const r: Awaited<ReturnType<typeof client.query<OperationsQueryResult, OperationsQueryVariables>>> =
          await client.query({ query: OperationsQuery, variables: { filter, after }, fetchPolicy: "no-cache" });
        if (!current) return;
        if (!r.data) throw r.error ?? new Error("no data");
        for (const e of r.data.operations.edges) {
          const row = readFragment(OperationRow, e.node);
          rows.set(row.id, row);
        }
        total = r.data.operations.totalCount;
        after = r.data.operations.pageInfo.hasNextPage ? r.data.operations.pageInfo.endCursor ?? null : null;
      } while (after);
      for (const [id, r] of seenLive.current) {
        if (!matches(r, filter)) {
          if (rows.delete(id)) total--;
        } else if (newer(r, rows.get(id))) {
          if (!rows.has(id)) total++;
          rows.set(id, r);
        }
      }
      setList({ rows, total, loading: false });
    })().catch((e: Error) => { if (current) setList((l) => ({ ...l, loading: false, error: e.message })); });
    return () => { current = false; };
  }, [client, filter, unknownResource, reads]);
  // Live changes, applied once per frame.
  const pending = useRef(new Map<string, Row>());
  const frame = useRef(0);
  useEffect(() => () => cancelAnimationFrame(frame.current), []);
  const [linkLost, setLinkLost] = useState<{ why: string; attempt: number } | null>(null);
  const lose = (why: string) => setLinkLost((l) => ({ why, attempt: (l?.attempt ?? 0) + 1 }));
  const live = useSubscription(OperationsLive, {
    skip: unknownResource,
    fetchPolicy: "no-cache",
    ignoreResults: true,
    onData: ({ data: msg }) => {
      if (!msg.data) return;
      const row = readFragment(OperationRow, msg.data.operations);
      seenLive.current.set(row.id, row);
      pending.current.set(row.id, row);
      if (frame.current) return;
      frame.current = requestAnimationFrame(() => {
        frame.current = 0;
        const batch = pending.current;
        pending.current = new Map();
        setLinkLost(null);
        setList((l) => {
          const rows = new Map(l.rows);
          let total = l.total;
          for (const [id, r] of batch) {
            if (!matches(r, filterRef.current)) {
              if (rows.delete(id)) total--; // it left the filter
            } else if (newer(r, rows.get(id))) {
              if (!rows.has(id)) total++; // a new operation gains a row
              rows.set(id, r);
            }
          }
          return { ...l, rows, total };
        });
      });
    },
    onError: (err) => lose(err.message),
    // The feed never ends while the server runs: an end is a server going
    // away, followed again like a lost connection.
    onComplete: () => lose("the server ended the live feed"),
  });
  // Resume after a lost connection: follow again and read the list again
  // (what changed meanwhile is in the list, not in the feed), waiting
  // longer after each failure.
  useEffect(() => {
    if (!linkLost) return;
    const t = setTimeout(() => { live.restart(); setReads((n) => n + 1); }, Math.min(1000 * linkLost.attempt, 10000));
    return () => clearTimeout(t);
  }, [linkLost]); // eslint-disable-line react-hooks/exhaustive-deps
  const rows = useMemo(
    () => [...list.rows.values()].sort((a, b) => needsAttention(a) - needsAttention(b) || b.createdAt.localeCompare(a.createdAt)),
    [list.rows]);
  const loading = list.loading;
  const error = list.error;
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => rowHeight, overscan: 10 });
  const items = virtual.getVirtualItems();
  const top = items.length ? items[0].start : 0;
  const bottom = items.length ? virtual.getTotalSize() - items[items.length - 1].end : 0;
  return (
    <section aria-labelledby="operations-title">
      <h2 id="operations-title">Operations</h2>
      <DriftPanel />
      <form className="filters" aria-label="filters" onSubmit={async (e) => {
        e.preventDefault();
        if (!resourceKey.trim()) { setResource(null); return; }
        const r = await client.query({ query: ResourceByKey, variables: { key: resourceKey.trim() } });
        setResource({ key: resourceKey.trim(), id: r.data?.resource?.id ?? null });
      }}>
        <label>Status{" "}
          <select aria-label="Status" value={status} onChange={(e) => setStatus(e.target.value as OperationStatus | "")}>
            <option value="">any</option>
            {statuses.map((s) => <option key={s} value={s}>{words(s)}</option>)}
          </select>
        </label>
        <label>Resource <input aria-label="Resource" value={resourceKey} onChange={(e) => setResourceKey(e.target.value)} placeholder="minio.instance/demo" /></label>
        <label>Created{" "}
          <select aria-label="Created" value={hours} onChange={(e) => setHours(Number(e.target.value))}>
            {windows.map((w) => <option key={w.hours} value={w.hours}>{w.label}</option>)}
          </select>
        </label>
        <button type="submit">Apply</button>
      </form>
      {unknownResource && <p role="alert" className="error">No resource {resource?.key}.</p>}
      {loading && rows.length === 0 && <p>Loading…</p>}
      {error && <p role="alert" className="error">{error}</p>}
      {linkLost && <p role="status" className="why">Live updates interrupted ({linkLost.why}); resuming…</p>}
      <div ref={scroller} className="rows" tabIndex={-1}>
        <table>
          <thead>
            <tr><th scope="col">Operation</th><th scope="col">Status</th><th scope="col">Phase</th><th scope="col">Progress</th><th scope="col">Needs attention</th><th scope="col">By</th></tr>
          </thead>
          <tbody>
            {top > 0 && <tr aria-hidden="true" className="spacer" style={{ height: top }} />}
            {items.map((v) => {
              const r = rows[v.index];
              return (
                <tr key={r.id} data-status={r.status} style={{ height: rowHeight }}>
                  <td><a href={`#/operations/${encodeURIComponent(r.id)}`}>{r.action} {r.resource?.key ?? ""}</a></td>
                  <td><Status value={r.status} /></td>
                  <td>{r.progress.currentPhase}</td>
                  <td><progress max={1} value={r.progress.progress} aria-label={`progress of ${r.action} ${r.resource?.key ?? ""}`} /></td>
                  <td>{[...r.progress.needsAttention, ...(r.progress.patchesAwaitingApproval ? [`${r.progress.patchesAwaitingApproval} patch(es) await approval`] : [])].join("; ")}</td>
                  <td>{r.actor}</td>
                </tr>
              );
            })}
            {bottom > 0 && <tr aria-hidden="true" className="spacer" style={{ height: bottom }} />}
          </tbody>
        </table>
      </div>
      <StatusLegend statuses={["WAITING", "RUNNING", "PENDING", "SUCCEEDED", "FAILED", "CANCELLED"]} label="operation status legend" />
      <p role="status">{plural(list.total, "operation")}{rows.length < list.total && ` (${rows.length} read)`}</p>
    </section>
  );
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
