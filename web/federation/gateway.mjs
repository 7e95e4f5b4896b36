// Capstan in a supergraph: @apollo/composition composes Capstan's
// subgraph (its _service { sdl }) with a small team directory written for
// this test (@apollo/subgraph: it extends Resource, by key, with its
// owning team, and lists a team's resources as references); a real
// @apollo/gateway serves the supergraph and forwards the caller's bearer
// token to Capstan. Checked through the gateway:
//   - a query that crosses both subgraphs (a resource's team, and its
//     operation running now) returns the right data;
//   - a token of another organization gets nothing of the first: the
//     team directory hands the gateway the first organization's keys,
//     and Capstan's _entities resolves each to null for that token;
//   - the p50 of one query direct and through the gateway, in one run.
// Prints "FIGURES {json}" and "OK: …". Run by cmd/capstan's
// TestGatewaySupergraph.
//
// env: CAPSTAN_URL, CAPSTAN_TOKEN (demo admin), CAPSTAN_OTHER_TOKEN
//      (another organization's admin), CAPSTAN_RESOURCE (a key with an
//      operation running), CAPSTAN_ROUNDS (timed queries, default 200)
import { createServer } from "node:http";
import { ApolloServer } from "@apollo/server";
import { startStandaloneServer } from "@apollo/server/standalone";
import { ApolloGateway, RemoteGraphQLDataSource } from "@apollo/gateway";
import { composeServices } from "@apollo/composition";
import { buildSubgraphSchema } from "@apollo/subgraph";
import { parse } from "graphql";

const { CAPSTAN_URL: url, CAPSTAN_TOKEN: token, CAPSTAN_OTHER_TOKEN: otherToken, CAPSTAN_RESOURCE: resourceKey } = process.env;
const rounds = Number(process.env.CAPSTAN_ROUNDS || 200);
const fail = (why) => { console.error("FAIL:", why); process.exit(1); };
setTimeout(() => fail("timed out after 120s"), 120_000).unref();

async function post(endpoint, bearer, query, variables) {
  const res = await fetch(endpoint, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${bearer}` }, body: JSON.stringify({ query, variables }) });
  return res.json();
}

// The team directory: who owns which resource.
const owners = { platform: ["kubernetes.cluster/prod-k8s"], storage: [resourceKey] };
const teamSDL = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Team { name: String!, resources: [Resource]! }
  type Resource @key(fields: "key") { key: String!, team: Team }
  type Query { team(name: String!): Team }
`);
const team = (name) => (owners[name] ? { name, resources: owners[name].map((key) => ({ key })) } : null);
const teamSchema = buildSubgraphSchema({
  typeDefs: teamSDL,
  resolvers: {
    Query: { team: (_, { name }) => team(name) },
    Resource: {
      __resolveReference: (ref) => ref,
      team: (ref) => team(Object.keys(owners).find((n) => owners[n].includes(ref.key))),
    },
  },
});
const teams = new ApolloServer({ schema: teamSchema });
const { url: teamsURL } = await startStandaloneServer(teams, { listen: { host: "127.0.0.1", port: 0 } });

// Compose: Capstan's SDL as it serves it, and the team directory's.
const capstanSDL = (await post(`${url}/graphql`, token, "{ _service { sdl } }")).data?._service?.sdl ?? fail("Capstan's _service");
const composed = composeServices([
  { name: "capstan", url: `${url}/graphql`, typeDefs: parse(capstanSDL) },
  { name: "teams", url: teamsURL, typeDefs: teamSDL },
]);
if (composed.errors) fail("composition: " + composed.errors.map((e) => e.message).join("; "));
console.log(`· composed a supergraph of capstan and teams (${composed.supergraphSdl.length} bytes)`);

// The gateway forwards the caller's Authorization to every subgraph.
const gateway = new ApolloGateway({
  supergraphSdl: composed.supergraphSdl,
  buildService: ({ url: u }) => new RemoteGraphQLDataSource({
    url: u,
    willSendRequest({ request, context }) { if (context.authorization) request.http.headers.set("authorization", context.authorization); },
  }),
});
const server = new ApolloServer({ gateway });
const { url: gatewayURL } = await startStandaloneServer(server, {
  listen: { host: "127.0.0.1", port: 0 },
  context: async ({ req }) => ({ authorization: req.headers.authorization }),
});

// 1. Across both subgraphs, with the demo organization's token.
const crossing = `query($key: String!) { resource(key: $key) { key environment team { name } activeOperation { id status } } team(name: "storage") { name resources { key lifecycleStatus activeOperation { status } } } }`;
const mine = await post(gatewayURL, token, crossing, { key: resourceKey });
if (mine.errors) fail("through the gateway: " + JSON.stringify(mine.errors));
const r = mine.data.resource;
if (r.team?.name !== "storage" || !r.activeOperation?.id || r.environment !== "prod") fail("the crossing query: " + JSON.stringify(mine.data));
const listed = mine.data.team.resources[0];
if (listed?.key !== resourceKey || !listed.activeOperation) fail("the team's resources, resolved by Capstan: " + JSON.stringify(mine.data.team));
console.log(`· ${r.key}: team ${r.team.name}, operation ${r.activeOperation.status} — through the gateway, the demo token`);

// 2. Another organization's token: nothing of the first. Its own
// resource query finds nothing, and the team directory's references to
// the first organization's resources resolve to null in Capstan.
const theirs = await post(gatewayURL, otherToken, crossing, { key: resourceKey });
const text = JSON.stringify(theirs);
if (theirs.data?.resource !== null) fail("another organization read the resource: " + text);
const refs = theirs.data?.team?.resources ?? [];
if (refs.length !== 1 || refs[0] !== null) fail("another organization resolved the first's references: " + text);
for (const leak of ["provisioning", "PROVISIONING", r.activeOperation.id, "WAITING"]) {
  if (text.includes(leak)) fail(`another organization's answer holds ${leak}: ${text}`);
}
console.log("· another organization's token: the resource is null, and each reference to the first's resolves to null");

// 3. One query, direct and through the gateway, alternately.
const small = `query($key: String!) { resource(key: $key) { key environment lifecycleStatus } }`;
const direct = [], viaGateway = [];
for (let i = 0; i < rounds; i++) {
  for (const [list, endpoint] of [[direct, `${url}/graphql`], [viaGateway, gatewayURL]]) {
    const t0 = performance.now();
    const res = await post(endpoint, token, small, { key: resourceKey });
    list.push(performance.now() - t0);
    if (res.errors) fail(JSON.stringify(res.errors));
  }
}
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const figures = { rounds, direct_p50_ms: Math.round(p50(direct) * 100) / 100, gateway_p50_ms: Math.round(p50(viaGateway) * 100) / 100 };
console.log("FIGURES " + JSON.stringify(figures));
await server.stop();
await teams.stop();
console.log("OK: the supergraph through a real gateway, with the caller's token and its organization's tenancy");
process.exit(0);
