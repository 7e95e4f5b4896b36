import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from "@apollo/client";
import { GraphQLWsLink } from "@apollo/client/link/subscriptions";
import { getMainDefinition } from "@apollo/client/utilities";
import { createClient } from "graphql-ws";

// Link is the state of the console's WebSocket: live, or reconnecting
// (shown in the header).
export type LinkState = "connecting" | "live" | "reconnecting";

export type Console = { client: ApolloClient; onLinkState: (f: (s: LinkState) => void) => () => void; dispose: () => void };

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
  const wsURL = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
  const ws = createClient({
    url: wsURL,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 0,
    on: { connecting: () => tell("connecting"), connected: () => tell("live"), closed: () => tell("reconnecting") },
  });
  const link = ApolloLink.split(
    ({ query }) => {
      const def = getMainDefinition(query);
      return def.kind === "OperationDefinition" && def.operation === "subscription";
    },
    new GraphQLWsLink(ws),
    http,
  );
  const client = new ApolloClient({
    link,
    cache: new InMemoryCache({
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
    dispose: () => { client.stop(); void ws.dispose(); },
  };
}
