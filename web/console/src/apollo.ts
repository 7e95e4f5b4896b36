import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from "@apollo/client";
import { GraphQLWsLink } from "@apollo/client/link/subscriptions";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { generatePersistedQueryIdsFromManifest } from "@apollo/persisted-query-lists";
import { getMainDefinition } from "@apollo/client/utilities";
import { createClient } from "graphql-ws";
import type { FieldPolicy, Reference } from "@apollo/client";

// byKey merges a list of objects without an id (a plan's nodes, an
// operation's node runs) element by element, matched by a key field:
// pages that select different fields of the same nodes then complete each
// other in the cache instead of replacing each other's list (which would
// leave every page's query partial, read again and again).
function byKey(key: string): FieldPolicy<unknown[]> {
  return {
    merge(existing, incoming, { readField, mergeObjects }) {
      if (!existing) return incoming;
      const old = new Map(existing.map((e) => [readField(key, e as Reference), e]));
      return incoming.map((i) => {
        const e = old.get(readField(key, i as Reference));
        return e ? mergeObjects(e as Reference, i as Reference) : i;
      });
    },
  };
}

// LinkState is the state of the console's WebSocket (shown in the
// header): live; idle when no view follows anything (graphql-ws closes a
// socket nobody uses, normally); reconnecting after it was lost.
export type LinkState = "connecting" | "live" | "idle" | "reconnecting";

export type Console = {
  client: ApolloClient;
  onLinkState: (f: (s: LinkState) => void) => () => void;
  // trustedDocuments tells the client the server's mode
  // (Viewer.trustedDocuments): under ENFORCE it sends its queries and
  // mutations by id alone.
  trustedDocuments: (mode: string) => void;
  dispose: () => void;
};

// newClient is the console's client: queries and mutations over HTTP,
// subscriptions over graphql-ws, both to this server's /graphql with the
// bearer token (in the Authorization header, and in connection_init).
//
// graphql-ws does not retry on its own (retryAttempts 0): a lost
// connection ends every subscription with an error, and each live view
// resumes itself the way it knows to be exact — the timeline from its
// last cursor, the dashboard by reading the list again. A silent retry
// would re-send the first variables and replay from the first cursor.
export function newClient(token: string): Console {
  const listeners = new Set<(s: LinkState) => void>();
  const tell = (s: LinkState) => listeners.forEach((f) => f(s));
  const http = new HttpLink({ uri: "/graphql", headers: { Authorization: `Bearer ${token}` } });
  // By id (the server's list holds the console's documents: its build
  // wrote them to /persisted-query-manifest.json) once the server says it
  // enforces the list; the document itself before. Subscriptions send
  // their (listed) document over the socket.
  let idsOnly = false;
  const byID = new PersistedQueryLink(generatePersistedQueryIdsFromManifest({
    loadManifest: () => fetch("/persisted-query-manifest.json").then((r) => r.json()),
  })).concat(http);
  const overHTTP = ApolloLink.split(() => idsOnly, byID, http);
  const wsURL = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
  const ws = createClient({
    url: wsURL,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 0,
    on: { connecting: () => tell("connecting"), connected: () => tell("live"), closed: (e) => tell((e as CloseEvent | undefined)?.code === 1000 ? "idle" : "reconnecting") },
  });
  const link = ApolloLink.split(
    ({ query }) => {
      const def = getMainDefinition(query);
      return def.kind === "OperationDefinition" && def.operation === "subscription";
    },
    new GraphQLWsLink(ws),
    overHTTP,
  );
  const client = new ApolloClient({
    link,
    cache: new InMemoryCache({
      typePolicies: {
        Plan: { fields: { nodes: byKey("key"), bindings: byKey("key") } },
        PlanRevision: { keyFields: false, fields: { nodes: byKey("key") } },
        Operation: { fields: { nodeRuns: byKey("node"), gates: byKey("node"), evidence: byKey("id"), artifacts: byKey("id"), interventions: byKey("id") } },
      },
      // Timeline events are an interface: one type per family of kinds.
      possibleTypes: {
        OperationEvent: ["OperationStatusEvent", "NodeEvent", "GateEvent", "PatchEvent", "PlanRevisedEvent", "EvidenceEvent",
          "ResourceEvent", "BindingEvent", "InterventionEvent", "AnalysisEvent", "SecretRevealedEvent", "OtherEvent"],
      },
    }),
  });
  return {
    client,
    onLinkState: (f) => { listeners.add(f); return () => { listeners.delete(f); }; },
    trustedDocuments: (mode) => { idsOnly = mode === "ENFORCE"; },
    dispose: () => { client.stop(); void ws.dispose(); },
  };
}
