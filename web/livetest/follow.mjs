// Follows a running Capstan operation the way an Apollo-based dashboard
// does: @apollo/client with GraphQLWsLink over the real graphql-ws client.
// It approves the operation's gates as a second (sre) approver when they
// wait, then checks the timeline it received is complete and ordered:
// sequences 1..n with no gap or duplicate, matching the stored timeline,
// ending with operation.succeeded. Exit 0 on success; 1 with the reason.
//
// env: CAPSTAN_URL (http://host:port), CAPSTAN_TOKEN, CAPSTAN_SRE_TOKEN,
//      CAPSTAN_OPERATION (global id)
import { ApolloClient, InMemoryCache, gql } from "@apollo/client";
import { GraphQLWsLink } from "@apollo/client/link/subscriptions";
import { createClient } from "graphql-ws";
import WebSocket from "ws";

const { CAPSTAN_URL: url, CAPSTAN_TOKEN: token, CAPSTAN_SRE_TOKEN: sreToken, CAPSTAN_OPERATION: operation } = process.env;
if (!url || !token || !sreToken || !operation) {
  console.error("CAPSTAN_URL, CAPSTAN_TOKEN, CAPSTAN_SRE_TOKEN and CAPSTAN_OPERATION are required");
  process.exit(2);
}

const fail = (why) => {
  console.error("FAIL:", why);
  process.exit(1);
};
setTimeout(() => fail("timed out after 60s"), 60_000).unref();

async function graphql(query, variables, bearer) {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ query, variables }),
  });
  return res.json();
}

const wsClient = createClient({
  url: url.replace(/^http/, "ws") + "/graphql",
  webSocketImpl: WebSocket,
  connectionParams: { Authorization: `Bearer ${token}` },
});
const client = new ApolloClient({ link: new GraphQLWsLink(wsClient), cache: new InMemoryCache() });

const EVENTS = gql`
  subscription Follow($op: ID!) {
    operationEvents(operation: $op) { cursor node { sequence type payload } }
  }
`;

const received = [];
client.subscribe({ query: EVENTS, variables: { op: operation } }).subscribe({
  next: async ({ data, error }) => {
    if (error) fail(`stream error: ${error.message}`);
    const { cursor, node } = data.operationEvents;
    if (String(node.sequence) !== cursor) fail(`cursor ${cursor} for event ${node.sequence}`);
    received.push(node);
    console.log(`${node.sequence} ${node.type}`);
    if (node.type === "gate.waiting") {
      const r = await graphql(
        `mutation($op: ID!, $node: String!) { decideGate(input: {operation: $op, node: $node, approve: true, comment: "apollo test"}) { status } }`,
        { op: operation, node: node.payload.node },
        sreToken,
      );
      if (r.errors) fail(`approving ${node.payload.node}: ${JSON.stringify(r.errors)}`);
    }
  },
  error: (err) => fail(`subscription error: ${err.message ?? err}`),
  complete: async () => {
    await check();
    await wsClient.dispose();
    process.exit(0);
  },
});

async function check() {
  received.forEach((e, i) => {
    if (e.sequence !== i + 1) fail(`event ${i} has sequence ${e.sequence}: a gap or a duplicate`);
  });
  const last = received.at(-1);
  if (!received.some((e) => e.type === "operation.succeeded")) fail(`the operation did not succeed; last event ${last?.type}`);
  const stored = await graphql(
    `query($op: ID!) { operation(id: $op) { status timeline(first: 500) { edges { node { sequence type } } } } }`,
    { op: operation },
    token,
  );
  const edges = stored.data.operation.timeline.edges;
  if (edges.length !== received.length) fail(`received ${received.length} events, the store has ${edges.length}`);
  edges.forEach(({ node }, i) => {
    if (node.type !== received[i].type) fail(`event ${i + 1}: received ${received[i].type}, stored ${node.type}`);
  });
  console.log(`OK: ${received.length} events, complete and in order; operation ${stored.data.operation.status}`);
}
