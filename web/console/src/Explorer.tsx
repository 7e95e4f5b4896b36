import { useEffect, useMemo, useState } from "react";
import { useApolloClient, useMutation, useQuery } from "@apollo/client/react";
import { graphql, useFragment as readFragment } from "./gql";
import { ResourceByKey } from "./queries";
import { KeyValues, Status, words } from "./ui";
import type { Direction, ResourceDetailQuery } from "./gql/graphql";
import { ActionButton, may, useViewer } from "./viewer";
import { GraphExplorer } from "./GraphExplorer";

const SearchResources = graphql(`
  query SearchResources($search: String, $after: String) {
    resources(filter: { search: $search }, first: 50, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          key
          name
          environment
          lifecycleStatus
          healthStatus
        }
      }
    }
  }
`);

const ResourceDetail = graphql(`
  query ResourceDetail($id: ID!, $direction: Direction!, $depth: Int!, $table: Boolean!) {
    resource(id: $id) {
      id
      key
      type
      name
      environment
      lifecycleStatus
      healthStatus
      source
      desiredState
      ...ResourceHealth
      providedCapabilities {
        capability
        scope
        attributes
      }
      activeOperation {
        id
        action
        status
      }
      boundBy(first: 20) {
        plan {
          id
          status
          intent {
            action
            targetResourceType
            desiredResult
          }
        }
        binding {
          key
          status
          reason
          requirement {
            capability
          }
        }
        operations(first: 5) {
          id
          action
          status
        }
      }
      servedBy {
        plan {
          id
        }
        binding {
          key
          status
          reason
          requirement {
            capability
          }
          provider {
            resourceKey
            resource {
              id
            }
          }
          subOperation {
            scenario
          }
        }
      }
    }
    dependencies(resource: $id, direction: $direction, depth: $depth) @include(if: $table) {
      depth
      edges {
        from
        to
        relationship
        depth
        resource {
          id
          key
          type
          name
          environment
          lifecycleStatus
          healthStatus
        }
      }
    }
    operations(filter: { resource: $id }, first: 50) {
      totalCount
      edges {
        node {
          id
          action
          status
          actor
          createdAt
        }
      }
    }
  }
`);

const ResourceHealth = graphql(`
  fragment ResourceHealth on Resource {
    assessment {
      at
      by
      health
      reason
      since
      diff {
        field
        desired
        observed
      }
      evidence {
        item
        result
        source
        observedAt
      }
    }
    assessmentPaused {
      by
      at
      note
    }
  }
`);

const ResourceImpact = graphql(`
  query ResourceImpact($id: ID!) {
    impact(resource: $id) {
      total
      byType {
        value
        count
      }
      byEnvironment {
        value
        count
      }
      dependents(first: 500) {
        edges {
          node {
            key
          }
        }
      }
      operating {
        id
        key
        activeOperation {
          id
          action
          status
        }
      }
    }
  }
`);

const ResourcePaths = graphql(`
  query ResourcePaths($from: ID!, $to: ID!, $direction: Direction!) {
    paths(from: $from, to: $to, direction: $direction, max: 3, depth: 6) {
      resources {
        id
        key
      }
      hops {
        from
        to
        relationship
      }
    }
  }
`);

const AssessResource = graphql(`
  mutation AssessResource($id: ID!) {
    assessResource(input: { resource: $id }) {
      id
      healthStatus
      ...ResourceHealth
    }
  }
`);

const RepairResource = graphql(`
  mutation RepairResource($id: ID!) {
    repairResource(input: { resource: $id }) {
      id
      status
    }
  }
`);

// Explorer finds resources by key or name and shows one: its capabilities,
// its dependencies either way to a chosen depth, the plans that bind it as
// a provider (Resource.boundBy), and its operation history.
export function Explorer({ id }: { id?: string }) {
  const [search, setSearch] = useState("");
  // The query follows the box a quarter second after typing stops.
  const [asked, setAsked] = useState("");
  useEffect(() => {
    const t = setTimeout(() => setAsked(search.trim()), 250);
    return () => clearTimeout(t);
  }, [search]);
  const { data, error } = useQuery(SearchResources, { variables: { search: asked || null } });
  return (
    <section aria-labelledby="explorer-title">
      <h2 id="explorer-title">Explorer</h2>
      <div className="explorer">
        <div>
          <label>Search resources <input aria-label="Search resources" type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="key or name" /></label>
          {error && <p role="alert" className="error">{error.message}</p>}
          <p className="muted" role="status">{data?.resources.totalCount ?? 0} found</p>
          <ul className="results" aria-label="resources">
            {data?.resources.edges.map(({ node: r }) => (
              <li key={r.id} aria-current={r.id === id ? "true" : undefined}>
                <a href={`#/explorer/${encodeURIComponent(r.id)}`}>{r.key}</a> <span className="muted">{r.environment} · {r.lifecycleStatus.toLowerCase()} · {r.healthStatus.toLowerCase()}</span>
              </li>
            ))}
          </ul>
        </div>
        {id ? <ResourceView id={id} /> : <p>Choose a resource.</p>}
      </div>
    </section>
  );
}

function ResourceView({ id }: { id: string }) {
  const [direction, setDirection] = useState<Direction>("OUTGOING");
  const [depth, setDepth] = useState(3);
  const [affected, setAffected] = useState<string[]>([]);
  const [onPath, setOnPath] = useState<string[]>([]);
  const marks = useMemo(() => new Map([...affected.map((k): [string, string] => [k, "affected"]), ...onPath.map((k): [string, string] => [k, "on the path"])]), [affected, onPath]);
  useEffect(() => { setAffected([]); setOnPath([]); }, [id]);
  const table = direction !== "BOTH";
  const { data, error, loading } = useQuery(ResourceDetail, { variables: { id, direction: table ? direction : "OUTGOING", depth, table } });
  if (error) return <p role="alert" className="error">{error.message}</p>;
  const r = data?.resource;
  if (!r) return <p>{loading ? "Loading…" : "No such resource."}</p>;
  const ops = data.operations.edges.map((e) => e.node);
  return (
    <article aria-labelledby="resource-title">
      <h3 id="resource-title">{r.key}</h3>
      <p>{r.name} · {r.type} · {r.environment} · <Status value={r.lifecycleStatus} /> · health <Status value={r.healthStatus} />{r.source && ` · from ${r.source}`}</p>
      <Health r={r} />
      {r.activeOperation && <p>Now changed by <a href={`#/operations/${encodeURIComponent(r.activeOperation.id)}`}>{r.activeOperation.action} ({r.activeOperation.status.toLowerCase()})</a></p>}
      <h4>Capabilities</h4>
      <ul>{r.providedCapabilities.map((c) => <li key={c.capability}><code>{c.capability}</code> {c.scope && <KeyValues value={c.scope} label={`${c.capability} scope`} />}</li>)}</ul>
      <h4>Dependencies</h4>
      <fieldset className="inline">
        <legend>Direction and depth</legend>
        <label><input type="radio" name="direction" checked={direction === "OUTGOING"} onChange={() => setDirection("OUTGOING")} /> what it depends on</label>
        <label><input type="radio" name="direction" checked={direction === "INCOMING"} onChange={() => setDirection("INCOMING")} /> what depends on it</label>
        <label><input type="radio" name="direction" checked={direction === "BOTH"} onChange={() => setDirection("BOTH")} /> both</label>
        <label>Depth <input aria-label="Depth" type="number" min={1} max={10} value={depth} onChange={(e) => setDepth(Math.max(1, Math.min(10, Number(e.target.value) || 1)))} /></label>
      </fieldset>
      <GraphExplorer id={r.id} rootKey={r.key} direction={direction} depth={depth} marks={marks} />
      {data.dependencies && <table aria-label="dependencies">
        <thead><tr><th scope="col">Depth</th><th scope="col">From</th><th scope="col">Relationship</th><th scope="col">To</th><th scope="col">State</th></tr></thead>
        <tbody>
          {data.dependencies.edges.length === 0 && <tr><td colSpan={5}>none</td></tr>}
          {data.dependencies.edges.map((e) => (
            <tr key={`${e.from}-${e.relationship}-${e.to}`}>
              <td>{e.depth}</td><td>{e.from}</td><td>{words(e.relationship)}</td>
              <td><a href={`#/explorer/${encodeURIComponent(e.resource.id)}`}>{e.to}</a></td>
              <td>{e.resource.lifecycleStatus.toLowerCase()} · {e.resource.healthStatus.toLowerCase()}</td>
            </tr>
          ))}
        </tbody>
      </table>}
      <ImpactView id={r.id} onWeighed={setAffected} />
      <PathFinder from={r} onFound={setOnPath} />
      <h4>Bound by ({r.boundBy.length})</h4>
      <p className="muted">Plans that bind this resource as the provider of a requirement, newest first.</p>
      <ul aria-label="bindings">
        {r.boundBy.length === 0 && <li>none</li>}
        {r.boundBy.map((b) => (
          <li key={`${b.plan.id}/${b.binding.key}`}>
            <a href={`#/plans/${encodeURIComponent(b.plan.id)}`}>{b.plan.intent.action} {b.plan.intent.targetResourceType} {String((b.plan.intent.desiredResult as Record<string, unknown> | null)?.name ?? "")}</a>
            {" "}· {b.binding.key} ({b.binding.requirement.capability}) · plan {b.plan.status.toLowerCase()}
            {b.operations.map((o) => <span key={o.id}> · <a href={`#/operations/${encodeURIComponent(o.id)}`}>{o.action}</a> <Status value={o.status} /></span>)}
            {" "}· <span className="muted">{b.binding.reason}</span>
          </li>
        ))}
      </ul>
      <h4>Served by ({r.servedBy.length})</h4>
      <p className="muted">The providers the plan of its last operation (or of the one that created it) bound for the capabilities it needs.</p>
      <ul aria-label="served by">
        {r.servedBy.length === 0 && <li>none</li>}
        {r.servedBy.map((b) => (
          <li key={`${b.plan.id}/${b.binding.key}`}>
            {b.binding.key} ({b.binding.requirement.capability}) ←{" "}
            {b.binding.provider?.resource ? <a href={`#/explorer/${encodeURIComponent(b.binding.provider.resource.id)}`}>{b.binding.provider.resourceKey}</a>
              : b.binding.provider?.resourceKey ?? (b.binding.subOperation ? `a new one from ${b.binding.subOperation.scenario}` : words(b.binding.status))}
            {" "}· <a href={`#/plans/${encodeURIComponent(b.plan.id)}`}>plan</a> · <span className="muted">{b.binding.reason}</span>
          </li>
        ))}
      </ul>
      <h4>Operation history ({data.operations.totalCount})</h4>
      <ul>
        {ops.map((o) => (
          <li key={o.id}><a href={`#/operations/${encodeURIComponent(o.id)}`}>{o.action}</a> · <Status value={o.status} /> · {o.actor} · <time dateTime={o.createdAt}>{new Date(o.createdAt).toLocaleString()}</time></li>
        ))}
      </ul>
    </article>
  );
}

type Detail = NonNullable<ResourceDetailQuery["resource"]>;

// ImpactView weighs, when asked, what breaks if the resource fails: how
// many resources depend on it, by type and environment, and those with an
// operation running now.
function ImpactView({ id, onWeighed }: { id: string; onWeighed: (keys: string[]) => void }) {
  const [asked, setAsked] = useState(false);
  const { data, error, loading } = useQuery(ResourceImpact, { variables: { id }, skip: !asked });
  const im = data?.impact;
  useEffect(() => { setAsked(false); }, [id]);
  useEffect(() => { if (im) onWeighed(im.dependents.edges.map((e) => e.node.key)); }, [im]); // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <section aria-label="impact">
      <h4>If it fails</h4>
      {!asked && <button type="button" onClick={() => setAsked(true)}>Weigh its impact</button>}
      {loading && <p role="status">Weighing…</p>}
      {error && <p role="alert" className="error">{error.message}</p>}
      {im && (
        <>
          <p role="status">{im.total} resources depend on it, directly or through others{im.total > 0 && ": the graph marks those it draws affected"}.</p>
          {im.total > 0 && (
            <table aria-label="impact by type and environment">
              <thead><tr><th scope="col">By</th><th scope="col">Value</th><th scope="col">Resources</th></tr></thead>
              <tbody>
                {im.byType.map((c) => <tr key={`t-${c.value}`}><td>type</td><td>{c.value}</td><td>{c.count}</td></tr>)}
                {im.byEnvironment.map((c) => <tr key={`e-${c.value}`}><td>environment</td><td>{c.value}</td><td>{c.count}</td></tr>)}
              </tbody>
            </table>
          )}
          {im.operating.length > 0 && (
            <ul aria-label="dependents with an operation running">
              {im.operating.map((o) => (
                <li key={o.id}><a href={`#/explorer/${encodeURIComponent(o.id)}`}>{o.key}</a>
                  {o.activeOperation && <> · <a href={`#/operations/${encodeURIComponent(o.activeOperation.id)}`}>{o.activeOperation.action}</a> <Status value={o.activeOperation.status} /></>}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}

type FoundPath = { resources: { id: string; key: string }[]; hops: { from: string; to: string; relationship: string }[] };

// PathFinder answers why the resource depends on another (or is linked
// to it): the shortest paths to a resource named by its key, each hop
// with its relationship.
function PathFinder({ from, onFound }: { from: { id: string; key: string }; onFound: (keys: string[]) => void }) {
  const client = useApolloClient();
  const [to, setTo] = useState("");
  const [direction, setDirection] = useState<Direction>("OUTGOING");
  const [paths, setPaths] = useState<FoundPath[] | null>(null);
  const [problem, setProblem] = useState("");
  const find = async () => {
    setProblem("");
    setPaths(null);
    onFound([]);
    try {
      const target = await client.query({ query: ResourceByKey, variables: { key: to.trim() } });
      const toID = target.data?.resource?.id;
      if (!toID) { setProblem(`No resource has the key ${to.trim()}.`); return; }
      const res = await client.query({ query: ResourcePaths, variables: { from: from.id, to: toID, direction } });
      setPaths(res.data?.paths ?? []);
      onFound(res.data?.paths?.[0]?.resources.map((x) => x.key) ?? []);
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <section aria-label="paths">
      <h4>Why linked</h4>
      <form className="inline" onSubmit={(e) => { e.preventDefault(); void find(); }}>
        <label>Path to <input aria-label="Path to" value={to} onChange={(e) => setTo(e.target.value)} placeholder="type/name" /></label>
        <label>Follow <select aria-label="Follow" value={direction} onChange={(e) => setDirection(e.target.value as Direction)}>
          <option value="OUTGOING">what it depends on</option>
          <option value="INCOMING">what depends on it</option>
          <option value="BOTH">either way</option>
        </select></label>
        <button type="submit" disabled={!to.trim()}>Find paths</button>
      </form>
      {problem && <p role="alert" className="error">{problem}</p>}
      {paths && paths.length === 0 && <p role="status">No path within 6 hops.</p>}
      {paths && paths.length > 0 && (
        <ol aria-label="found paths">
          {paths.map((p, i) => (
            <li key={i}>
              {p.resources.map((res, j) => (
                <span key={res.id}>
                  {j > 0 && <span className="hop"> {p.hops[j - 1].from === res.key ? "←" : "→"} {words(p.hops[j - 1].relationship)} {p.hops[j - 1].from === res.key ? "←" : "→"} </span>}
                  <a href={`#/explorer/${encodeURIComponent(res.id)}`}>{res.key}</a>
                </span>
              ))}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

// show writes a desired or observed value as a person reads it.
function show(v: unknown): string {
  if (v === null || v === undefined) return "nothing observed";
  return typeof v === "string" ? v : JSON.stringify(v);
}

// Health shows a resource's last assessment on its host: the health, the
// drifted fields with their desired and observed values, each probe's
// verdict and where it looked; with "Assess now" and, when drifted or
// degraded, "Plan a repair" (a plan to review: nothing is repaired yet).
function Health({ r }: { r: Detail }) {
  const viewer = useViewer();
  const [assess, assessing] = useMutation(AssessResource);
  const [repair, repairing] = useMutation(RepairResource);
  const { assessment: a, assessmentPaused: paused } = readFragment(ResourceHealth, r);
  const plan = repairing.data?.repairResource;
  return (
    <section aria-label="health" className="health">
      <h4>Health</h4>
      {!a && <p className="muted">Not assessed since its last operation{r.desiredState ? "" : " (it holds no desired state)"}.</p>}
      {a && (
        <p>
          <Status value={a.health} /> · {a.reason} · assessed{" "}
          <time dateTime={a.at}>{new Date(a.at).toLocaleString()}</time> by {a.by} · {a.health.toLowerCase()} since <time dateTime={a.since}>{new Date(a.since).toLocaleString()}</time>
        </p>
      )}
      {paused && <p className="why" role="note">Scheduled assessments paused by {paused.by}: {paused.note}</p>}
      {a && a.diff.length > 0 && (
        <table aria-label="drift">
          <thead><tr><th scope="col">Field</th><th scope="col">Desired</th><th scope="col">Observed</th></tr></thead>
          <tbody>
            {a.diff.map((d) => (
              <tr key={d.field}><td><code>{d.field}</code></td><td><code>{show(d.desired)}</code></td><td className="drifted"><code>{show(d.observed)}</code></td></tr>
            ))}
          </tbody>
        </table>
      )}
      {a && a.evidence.length > 0 && (
        <ul aria-label="observations">
          {a.evidence.map((e) => (
            <li key={e.item}>
              <code>{e.item}</code> <Status value={e.result} />{" "}
              <span className="muted">{String(e.source?.type ?? "")} on {String(e.source?.host ?? "?")} ({String(e.source?.address ?? "?")}){e.source?.note ? ` · ${String(e.source.note)}` : ""}</span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <ActionButton verdict={may(viewer, "ASSESS_RESOURCE")} busy={assessing.loading} onClick={() => void assess({ variables: { id: r.id } }).catch(() => {})}>Assess now</ActionButton>{" "}
        {(r.healthStatus === "DRIFTED" || r.healthStatus === "DEGRADED") && !plan && (
          <ActionButton verdict={may(viewer, "CREATE_INTENT")} busy={repairing.loading} onClick={() => void repair({ variables: { id: r.id } }).catch(() => {})}>Plan a repair</ActionButton>
        )}
      </p>
      {assessing.error && <p role="alert" className="error">{assessing.error.message}</p>}
      {repairing.error && <p role="alert" className="error">{repairing.error.message}</p>}
      {plan && <p role="status">Repair planned ({plan.status.toLowerCase()}): <a href={`#/plans/${encodeURIComponent(plan.id)}`}>review and start it</a>. Nothing is repaired until it is started.</p>}
    </section>
  );
}
