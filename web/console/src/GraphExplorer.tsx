import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useApolloClient, useQuery, useSubscription } from "@apollo/client/react";
import { graphql } from "./gql";
import type { Direction, RelationshipType } from "./gql/graphql";
import { ResourceGraph, type Expansion, type GraphActions, type GraphEdge, type GraphResource } from "./ResourceGraph";
import { Status } from "./ui";

const GraphPage = graphql(`
  query ResourceGraphPage($id: ID!, $direction: Direction!, $depth: Int!, $filter: ResourceGraphFilter, $first: Int!, $after: String, $holds: Boolean!) {
    resourceGraph(root: $id, direction: $direction, depth: $depth, filter: $filter, first: $first, after: $after) {
      nodes {
        depth
        resource {
          id
          key
          type
          name
          environment
          healthStatus
          relationships @include(if: $holds) {
            type
            targetKey
          }
        }
      }
      edges {
        from
        to
        relationship
      }
      omitted {
        value
        count
      }
      omittedTotal
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

const GraphHealthLive = graphql(`
  subscription GraphHealthLive {
    resourceHealth {
      id
      key
      healthStatus
    }
  }
`);

const GraphOperationsLive = graphql(`
  subscription GraphOperationsLive {
    operations {
      id
      status
      resource {
        id
        key
        healthStatus
      }
    }
  }
`);

const SelectedBindings = graphql(`
  query SelectedBindings($id: ID!) {
    resource(id: $id) {
      id
      key
      activeOperation {
        id
        action
        status
      }
      boundBy(first: 10) {
        plan {
          id
          intent {
            action
            targetResourceType
          }
        }
        binding {
          key
          reason
          requirement {
            capability
          }
        }
        operations(first: 3) {
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
  }
`);

// How many resources the first view draws, and each expansion adds.
export const graphFirst = 500;
export const expandFirst = 25;

const relationshipTypes: RelationshipType[] = ["RUNS_ON", "DEPENDS_ON", "USES", "CONNECTS_TO", "PART_OF"];

type Filter = { relationships: RelationshipType[]; types: string[]; environments: string[] };
// drawn is the graph on screen: resources by key (with the expansion that
// added each: "" for the first view), and edges by id.
type Drawn = { resources: Map<string, GraphResource>; addedBy: Map<string, string>; edges: Map<string, GraphEdge>; omitted: { value: string; count: number }[]; omittedTotal: number };

const edgeID = (e: GraphEdge) => `${e.from}-${e.relationship}->${e.to}`;

// GraphExplorer draws a resource's neighbourhood, lets a node be
// expanded a page at a time and collapsed again, filters it by
// relationship, type and environment, finds a node by key or name, and
// recolours a node live when an assessment or an operation changes its
// health. marks label resources (affected, on the path) in words.
export function GraphExplorer({ id, rootKey, direction, depth, marks }: { id: string; rootKey: string; direction: Direction; depth: number; marks?: Map<string, string> }) {
  const client = useApolloClient();
  const [filter, setFilter] = useState<Filter>({ relationships: [], types: [], environments: [] });
  const [known, setKnown] = useState<{ types: Set<string>; environments: Set<string> }>({ types: new Set(), environments: new Set() });
  const [drawn, setDrawn] = useState<Drawn | null>(null);
  const [expansions, setExpansions] = useState<Map<string, Expansion & { after?: string }>>(new Map());
  const [selected, setSelected] = useState<GraphResource | null>(null);
  const [focus, setFocus] = useState<{ key: string; n: number } | undefined>();
  const [problem, setProblem] = useState("");
  const gqlFilter = useMemo(() => (filter.relationships.length + filter.types.length + filter.environments.length > 0 ? filter : null), [filter]);
  const base = useQuery(GraphPage, { variables: { id, direction, depth, filter: gqlFilter, first: graphFirst, after: null, holds: false }, fetchPolicy: "network-only" });
  const generation = useRef(0);

  // A new first view: the expansions start again.
  useEffect(() => {
    const g = base.data?.resourceGraph;
    if (!g) return;
    generation.current++;
    const resources = new Map(g.nodes.map((n) => [n.resource.key, n.resource as GraphResource]));
    setDrawn({ resources, addedBy: new Map([...resources.keys()].map((k) => [k, ""])), edges: new Map(g.edges.map((e) => [edgeID(e), e])), omitted: g.omitted, omittedTotal: g.omittedTotal });
    // The root's neighbours both ways are drawn when the view walks both
    // ways; "more" then continues the first view a page at a time.
    setExpansions(new Map(direction === "BOTH" ? [[rootKey, { expanded: true, more: g.pageInfo.hasNextPage, busy: false, after: g.pageInfo.endCursor ?? undefined }]] : []));
    setKnown((k) => ({
      types: new Set([...k.types, ...g.nodes.map((n) => n.resource.type), ...g.omitted.map((o) => o.value)]),
      environments: new Set([...k.environments, ...g.nodes.map((n) => n.resource.environment)]),
    }));
  }, [base.data, rootKey]); // eslint-disable-line react-hooks/exhaustive-deps

  // Live: an assessment or an operation recolours the node it changed.
  const recolour = useCallback((key: string, healthStatus: string) => {
    setDrawn((d) => {
      const r = d?.resources.get(key);
      if (!d || !r || r.healthStatus === healthStatus) return d;
      const resources = new Map(d.resources);
      resources.set(key, { ...r, healthStatus });
      return { ...d, resources };
    });
  }, []);
  useSubscription(GraphHealthLive, { fetchPolicy: "no-cache", onData: ({ data }) => { const r = data.data?.resourceHealth; if (r) recolour(r.key, r.healthStatus); } });
  useSubscription(GraphOperationsLive, { fetchPolicy: "no-cache", onData: ({ data }) => { const r = data.data?.operations.resource; if (r) recolour(r.key, r.healthStatus); } });

  // Expanding draws a node's neighbours both ways, a page at a time; the
  // root's "more" continues the first view past its page.
  const expand = useCallback(async (r: GraphResource) => {
    const was = expansions.get(r.key);
    const started = generation.current;
    const continues = r.key === rootKey && was?.expanded;
    setExpansions((m) => new Map(m).set(r.key, { expanded: was?.expanded ?? false, more: true, busy: true, after: was?.after }));
    try {
      const res = await client.query({ query: GraphPage, fetchPolicy: "network-only",
        variables: { id: r.id, direction: continues ? direction : "BOTH", depth: continues ? depth : 1, filter: gqlFilter, first: expandFirst, after: was?.after ?? null, holds: true } });
      const g = res.data?.resourceGraph;
      if (!g || started !== generation.current) return;
      setDrawn((d) => {
        if (!d) return d;
        const resources = new Map(d.resources);
        const addedBy = new Map(d.addedBy);
        const edges = new Map(d.edges);
        for (const n of g.nodes) {
          if (!resources.has(n.resource.key)) addedBy.set(n.resource.key, r.key);
          const { relationships, ...shown } = n.resource;
          resources.set(n.resource.key, { ...(resources.get(n.resource.key) ?? {}), ...shown } as GraphResource);
          for (const rel of relationships ?? []) {
            const allowed = filter.relationships.length === 0 || filter.relationships.includes(rel.type);
            if (allowed && resources.has(rel.targetKey)) edges.set(edgeID({ from: n.resource.key, to: rel.targetKey, relationship: rel.type }), { from: n.resource.key, to: rel.targetKey, relationship: rel.type });
          }
        }
        for (const e of g.edges) edges.set(edgeID(e), e);
        return { ...d, resources, addedBy, edges, ...(continues ? { omitted: g.omitted, omittedTotal: g.omittedTotal } : {}) };
      });
      setExpansions((m) => new Map(m).set(r.key, { expanded: true, more: g.pageInfo.hasNextPage, busy: false, after: g.pageInfo.endCursor ?? undefined }));
    } catch (e) {
      setProblem(e instanceof Error ? e.message : String(e));
      setExpansions((m) => new Map(m).set(r.key, { expanded: was?.expanded ?? false, more: true, busy: false, after: was?.after }));
    }
  }, [client, rootKey, direction, depth, expansions, filter, gqlFilter]);

  // Collapsing takes away what the node's expansions added, and what
  // their own expansions added in turn; the first view stays.
  const collapse = useCallback((r: GraphResource) => {
    setDrawn((d) => {
      if (!d) return d;
      const gone = new Set<string>();
      const take = (owner: string) => {
        for (const [k, by] of d.addedBy) if (by === owner && !gone.has(k)) { gone.add(k); take(k); }
      };
      take(r.key);
      const keep = <T,>(m: Map<string, T>, f: (k: string, v: T) => boolean) => new Map([...m].filter(([k, v]) => f(k, v)));
      return { ...d, resources: keep(d.resources, (k) => !gone.has(k)), addedBy: keep(d.addedBy, (k) => !gone.has(k)), edges: keep(d.edges, (_, e) => !gone.has(e.from) && !gone.has(e.to)) };
    });
    setExpansions((m) => {
      const next = new Map(m);
      next.delete(r.key);
      return next;
    });
  }, []);

  const actions: GraphActions = useMemo(() => ({ onSelect: setSelected, onExpand: (r) => void expand(r), onCollapse: collapse }), [expand, collapse]);
  // A recolour replaces the resources only: the edges (and their drawn
  // lines) stay as they are.
  const resources = useMemo(() => [...(drawn?.resources.values() ?? [])], [drawn?.resources]);
  const edges = useMemo(() => [...(drawn?.edges.values() ?? [])], [drawn?.edges]);

  if (base.error) return <p role="alert" className="error">{base.error.message}</p>;
  return (
    <section aria-label="graph explorer" className="graph-explorer">
      <GraphFilters filter={filter} known={known} onChange={setFilter} />
      <FindInGraph resources={resources} onFound={(r) => { setSelected(r); setFocus((f) => ({ key: r.key, n: (f?.n ?? 0) + 1 })); }} omittedTotal={drawn?.omittedTotal ?? 0} />
      {!drawn ? <p className="muted">Drawing…</p> : (
        <>
          <ResourceGraph root={rootKey} resources={resources} edges={edges} label="dependency graph" selected={selected?.key} focus={focus}
            marks={marks} expansions={expansions} actions={actions} />
          <p className="muted" role="status">
            {resources.length} resources drawn{drawn.omittedTotal > 0 && `, ${drawn.omittedTotal} more not drawn: ${drawn.omitted.map((o) => `+${o.count} ${o.value}`).join(", ")}`}.
          </p>
        </>
      )}
      {problem && <p role="alert" className="error">{problem}</p>}
      {selected && <SelectedResource r={selected} live={drawn?.resources.get(selected.key)} onClose={() => setSelected(null)} />}
    </section>
  );
}

// GraphFilters narrows what the graph follows and draws: relationship
// types, and the resource types and environments seen so far.
function GraphFilters({ filter, known, onChange }: { filter: Filter; known: { types: Set<string>; environments: Set<string> }; onChange: (f: Filter) => void }) {
  const toggle = <T extends string>(list: T[], v: T) => (list.includes(v) ? list.filter((x) => x !== v) : [...list, v]);
  return (
    <details className="graph-filters">
      <summary>Filter the graph{filter.relationships.length + filter.types.length + filter.environments.length > 0 ? " (on)" : ""}</summary>
      <fieldset className="inline">
        <legend>Follow only these relationships (none: all)</legend>
        {relationshipTypes.map((t) => (
          <label key={t}><input type="checkbox" checked={filter.relationships.includes(t)} onChange={() => onChange({ ...filter, relationships: toggle(filter.relationships, t) })} /> {t.toLowerCase().replace("_", " ")}</label>
        ))}
      </fieldset>
      <fieldset className="inline">
        <legend>Draw only these types (none: all)</legend>
        {[...known.types].sort().map((t) => (
          <label key={t}><input type="checkbox" checked={filter.types.includes(t)} onChange={() => onChange({ ...filter, types: toggle(filter.types, t) })} /> {t}</label>
        ))}
      </fieldset>
      <fieldset className="inline">
        <legend>Draw only these environments (none: all)</legend>
        {[...known.environments].sort().map((e) => (
          <label key={e || "none"}><input type="checkbox" checked={filter.environments.includes(e)} onChange={() => onChange({ ...filter, environments: toggle(filter.environments, e) })} /> {e || "no environment"}</label>
        ))}
      </fieldset>
    </details>
  );
}

// FindInGraph focuses the first drawn resource whose key or name holds
// the text.
function FindInGraph({ resources, onFound, omittedTotal }: { resources: GraphResource[]; onFound: (r: GraphResource) => void; omittedTotal: number }) {
  const [text, setText] = useState("");
  const [missing, setMissing] = useState("");
  const find = () => {
    const t = text.trim().toLowerCase();
    const hit = resources.find((r) => r.key.toLowerCase() === t) ?? resources.find((r) => r.key.toLowerCase().includes(t) || r.name.toLowerCase().includes(t));
    setMissing(hit ? "" : `No drawn resource matches “${text.trim()}”${omittedTotal > 0 ? `: it may be among the ${omittedTotal} not drawn (expand a node, or filter)` : ""}.`);
    if (hit) onFound(hit);
  };
  return (
    <form className="inline" role="search" aria-label="search the drawn graph" onSubmit={(e) => { e.preventDefault(); find(); }}>
      <label>Find in graph <input aria-label="Find in graph" value={text} onChange={(e) => setText(e.target.value)} placeholder="key or name" /></label>
      <button type="submit" disabled={!text.trim()}>Find</button>
      {missing && <span role="status" className="muted">{missing}</span>}
    </form>
  );
}

// SelectedResource is the selected node's panel: its health, the
// operation changing it, and the capability graph the planner resolved
// around it — the plans (and their operations) that bound it as a
// provider, each with its requirement and reason, and the providers that
// serve it as a consumer.
function SelectedResource({ r, live, onClose }: { r: GraphResource; live?: GraphResource; onClose: () => void }) {
  const { data, error } = useQuery(SelectedBindings, { variables: { id: r.id } });
  const x = data?.resource;
  return (
    <aside aria-label="selected resource" className="selected-resource">
      <h4><a href={`#/explorer/${encodeURIComponent(r.id)}`}>{r.key}</a></h4>
      <p>{r.type} · {r.environment || "no environment"} · health <Status value={(live ?? r).healthStatus} />{" "}
        <button type="button" className="small" onClick={onClose}>Close</button></p>
      {error && <p role="alert" className="error">{error.message}</p>}
      {x?.activeOperation && <p>Now changed by <a href={`#/operations/${encodeURIComponent(x.activeOperation.id)}`}>{x.activeOperation.action}</a> <Status value={x.activeOperation.status} /></p>}
      {x && (
        <>
          <h5>Serves ({x.boundBy.length})</h5>
          <ul aria-label="plans it serves">
            {x.boundBy.length === 0 && <li className="muted">No plan bound it as a provider.</li>}
            {x.boundBy.map((b) => (
              <li key={`${b.plan.id}/${b.binding.key}`}>
                <a href={`#/plans/${encodeURIComponent(b.plan.id)}`}>{b.plan.intent.action} {b.plan.intent.targetResourceType}</a> · {b.binding.key} ({b.binding.requirement.capability})
                {b.operations.map((o) => <span key={o.id}> · <a href={`#/operations/${encodeURIComponent(o.id)}`}>{o.action}</a> <Status value={o.status} /></span>)}
                <br /><span className="muted">{b.binding.reason}</span>
              </li>
            ))}
          </ul>
          <h5>Served by ({x.servedBy.length})</h5>
          <ul aria-label="providers serving it">
            {x.servedBy.length === 0 && <li className="muted">No operation's plan bound providers for it.</li>}
            {x.servedBy.map((b) => (
              <li key={`${b.plan.id}/${b.binding.key}`}>
                {b.binding.key} ({b.binding.requirement.capability}) ←{" "}
                {b.binding.provider?.resource ? <a href={`#/explorer/${encodeURIComponent(b.binding.provider.resource.id)}`}>{b.binding.provider.resourceKey}</a>
                  : b.binding.provider?.resourceKey ?? (b.binding.subOperation ? `a new one from ${b.binding.subOperation.scenario}` : b.binding.status.toLowerCase())}
                <br /><span className="muted">{b.binding.reason}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </aside>
  );
}
