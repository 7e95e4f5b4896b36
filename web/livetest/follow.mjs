// Follows a running Capstan operation the way an Apollo-based dashboard
// does: @apollo/client with GraphQLWsLink over the real graphql-ws client.
// It approves the operation's gates as a second (sre) approver when they
// wait, then checks the timeline it received is complete and ordered:
// sequences 1..n with no gap or duplicate, matching the stored timeline,
// ending with operation.succeeded. Cursors have one format: the first
// events are read with the operation.timeline query and the subscription
// resumes from that query's cursor; afterwards a cursor the subscription
// gave pages the query. Exit 0 on success; 1 with the reason.
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
  subscription Follow($op: ID!, $after: String) {
    operationEvents(operation: $op, after: $after) { cursor node { sequence type payload } }
  }
`;

// The first two events come from the query, as a dashboard loads a page
// before it goes live; the subscription resumes from the query's cursor.
const head = await graphql(
  `query($op: ID!) { operation(id: $op) { timeline(first: 2) { edges { cursor node { sequence type payload } } pageInfo { endCursor } } } }`,
  { op: operation },
  token,
);
if (head.errors) fail(`timeline query: ${JSON.stringify(head.errors)}`);
const received = head.data.operation.timeline.edges.map((e) => e.node);
const cursors = head.data.operation.timeline.edges.map((e) => e.cursor);
if (received.length !== 2) fail(`the timeline query gave ${received.length} events, want 2`);
client.subscribe({ query: EVENTS, variables: { op: operation, after: head.data.operation.timeline.pageInfo.endCursor } }).subscribe({
  next: async ({ data, error }) => {
    if (error) fail(`stream error: ${error.message}`);
    const { cursor, node } = data.operationEvents;
    received.push(node);
    cursors.push(cursor);
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
  // A cursor the subscription gave pages the query: the page after the
  // third event starts at the fourth.
  const paged = await graphql(
    `query($op: ID!, $after: String) { operation(id: $op) { timeline(first: 1, after: $after) { edges { cursor node { sequence } } } } }`,
    { op: operation, after: cursors[2] },
    token,
  );
  if (paged.errors) fail(`paging the timeline with a subscription cursor: ${JSON.stringify(paged.errors)}`);
  const next = paged.data.operation.timeline.edges[0];
  if (next?.node.sequence !== 4) fail(`the page after the subscription's third cursor starts at ${next?.node.sequence}, want 4`);
  if (next.cursor !== cursors[3]) fail(`event 4 has cursor ${next.cursor} in the query and ${cursors[3]} in the subscription`);
  console.log(`OK: ${received.length} events, complete and in order; operation ${stored.data.operation.status}`);
}
