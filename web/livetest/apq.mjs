// Automatic persisted queries with the real Apollo Client: its
// PersistedQueryLink (hashes with node:crypto, GET for hashed queries)
// against a real Capstan server. The console's heaviest query
// (ResourceDetail, read from the console's generated documents) is sent
// by hash: not found the first time, registered by the link's retry with
// the document, then answered by hash alone for a new client; a mutation
// goes by hash over POST. Every request is recorded, and the bytes each
// way are printed: "BYTES {json}". Exit 0 on success; 1 with the reason.
//
// env: CAPSTAN_URL (http://host:port), CAPSTAN_TOKEN, CAPSTAN_RESOURCE
//      (global id of the resource to read)
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { ApolloClient, HttpLink, InMemoryCache, gql } from "@apollo/client";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";

const { CAPSTAN_URL: url, CAPSTAN_TOKEN: token, CAPSTAN_RESOURCE: resource } = process.env;
const fail = (why) => {
  console.error("FAIL:", why);
  process.exit(1);
};
setTimeout(() => fail("timed out after 60s"), 60_000).unref();

// The console's documents, as its codegen wrote them: ResourceDetail
// with the fragment it spreads.
const generated = readFileSync(new URL("../console/src/gql/gql.ts", import.meta.url), "utf8");
const documents = [...generated.matchAll(/^ {4}"((?:[^"\\]|\\.)*)": types\./gm)].map((m) => JSON.parse(`"${m[1]}"`));
const pick = (head) => documents.find((d) => d.trim().startsWith(head)) ?? fail(`no console document starts with ${head}`);
const RESOURCE_DETAIL = gql(pick("query ResourceDetail(") + pick("fragment ResourceHealth on Resource"));

// requests records what went over the wire.
const requests = [];
const recording = async (input, init = {}) => {
  const u = new URL(typeof input === "string" ? input : input.url);
  requests.push({ method: init.method ?? "GET", url: u, body: init.body ?? "", bytes: (u.pathname + u.search).length + (init.body?.length ?? 0) });
  return fetch(input, init);
};
const http = () => new HttpLink({ uri: `${url}/graphql`, fetch: recording, headers: { Authorization: `Bearer ${token}` } });
const persisted = () => new PersistedQueryLink({ sha256: (q) => createHash("sha256").update(q).digest("hex"), useGETForHashedQueries: true });
const apqClient = () => new ApolloClient({ link: persisted().concat(http()), cache: new InMemoryCache() });
const variables = { id: resource, direction: "OUTGOING", depth: 3, table: true };

// 1. The first client: a hash alone (GET), not found; the link sends the
// document (POST) and the server keeps it.
const first = await apqClient().query({ query: RESOURCE_DETAIL, variables });
if (first.error || !first.data?.resource?.key) fail("first query: " + JSON.stringify(first.error ?? first.data));
if (requests.length !== 2) fail(`the first query took ${requests.length} requests, not 2 (hash, then document)`);
const [byHash, withDocument] = requests;
if (byHash.method !== "GET" || byHash.url.searchParams.has("query")) fail("the first request was not the hash alone over GET");
if (withDocument.method !== "POST" || !JSON.parse(withDocument.body).query) fail("the retry did not send the document");

// 2. A second client (its own cache): the hash alone is answered.
requests.length = 0;
const second = await apqClient().query({ query: RESOURCE_DETAIL, variables });
if (requests.length !== 1 || requests[0].method !== "GET" || requests[0].url.searchParams.has("query")) fail("the second client did not get its answer by hash alone: " + JSON.stringify(requests.map((r) => r.method + " " + r.url.search.slice(0, 80))));
if (JSON.stringify(second.data) !== JSON.stringify(first.data)) fail("the answer by hash differs from the first");
const apqBytes = requests[0].bytes;

// 3. Without the link: the document every time.
requests.length = 0;
await new ApolloClient({ link: http(), cache: new InMemoryCache() }).query({ query: RESOURCE_DETAIL, variables });
const plainBytes = requests[0].bytes;

// 4. A mutation by hash goes over POST, and runs.
requests.length = 0;
const created = await apqClient().mutate({
  mutation: gql`mutation Apq($in: CreateIntentInput!) { createIntent(input: $in) { id } }`,
  variables: { in: { action: "install", targetResourceType: "minio.instance", desiredResult: { name: "apq" }, constraints: { environment: "staging" } } },
});
if (!created.data?.createIntent?.id) fail("the mutation by hash: " + JSON.stringify(created));
if (requests.some((r) => r.method !== "POST")) fail("a mutation went over GET");

console.log("BYTES " + JSON.stringify({ query: "ResourceDetail", withAPQ: apqBytes, without: plainBytes, registering: byHash.bytes + withDocument.bytes }));
console.log("OK: persisted queries with Apollo Client's link: not found, registered, answered by hash; a mutation over POST");
