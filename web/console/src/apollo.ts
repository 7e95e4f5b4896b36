import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from "@apollo/client";
import { GraphQLWsLink } from "@apollo/client/link/subscriptions";
import { getMainDefinition } from "@apollo/client/utilities";
import { createClient } from "graphql-ws";

// The console's client: queries and mutations over HTTP, subscriptions over
// graphql-ws, both to this server's /graphql with the bearer token (in the
// Authorization header, and in connection_init).
export function newClient(token: string): ApolloClient {
  const http = new HttpLink({ uri: "/graphql", headers: { Authorization: `Bearer ${token}` } });
  const wsURL = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
  const ws = new GraphQLWsLink(createClient({ url: wsURL, connectionParams: { Authorization: `Bearer ${token}` }, retryAttempts: Infinity }));
  const link = ApolloLink.split(
    ({ query }) => {
      const def = getMainDefinition(query);
      return def.kind === "OperationDefinition" && def.operation === "subscription";
    },
    ws,
    http,
  );
  return new ApolloClient({
    link,
    cache: new InMemoryCache({
      // Timeline events are an interface: one type per family of kinds.
      possibleTypes: {
        OperationEvent: ["OperationStatusEvent", "NodeEvent", "GateEvent", "PatchEvent", "PlanRevisedEvent", "EvidenceEvent",
          "ResourceEvent", "BindingEvent", "InterventionEvent", "AnalysisEvent", "SecretRevealedEvent", "OtherEvent"],
      },
    }),
  });
}
