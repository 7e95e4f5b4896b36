// The console against a server that enforces its trusted documents
// (capstan serve --trusted-documents console --trusted-documents-mode
// enforce): a viewer signs in and reads the dashboard, an operation's
// page and the explorer, every query and mutation sent by id alone; then
// a hand-written query with the viewer's token is refused, FORBIDDEN
// with reason UNTRUSTED_DOCUMENT, while an admin's runs (GraphiQL).
// Run by cmd/capstan's TestConsoleUnderTrustedDocuments.
import { chromium } from "playwright-core";

const url = process.env.CAPSTAN_URL;
const viewerToken = process.env.CAPSTAN_VIEWER_TOKEN;
const adminToken = process.env.CAPSTAN_TOKEN;
const fail = (msg) => { throw new Error(msg); };

async function gql(bearer, query) {
  const resp = await fetch(url + "/graphql", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + bearer },
    body: JSON.stringify({ query }),
  });
  return resp.json();
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  const sent = [];
  page.on("request", (r) => {
    if (!r.url().endsWith("/graphql") || r.method() !== "POST") return;
    const body = JSON.parse(r.postData() ?? "{}");
    sent.push({ name: body.operationName, query: !!body.query, id: body.extensions?.persistedQuery?.sha256Hash });
  });
  const errors = [];
  page.on("response", async (r) => {
    if (!r.url().endsWith("/graphql")) return;
    const body = await r.json().catch(() => null);
    for (const e of body?.errors ?? []) errors.push(`${e.extensions?.code} ${e.message}`);
  });
  await page.goto(url + "/");
  await page.getByLabel("Bearer token").fill(viewerToken);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByLabel("signed in as").waitFor({ timeout: 10000 });
  await page.locator("tbody tr[data-status]").first().waitFor({ timeout: 10000 });
  await page.getByRole("link", { name: "Explorer" }).click();
  await page.getByLabel("Search resources").fill("prod-k8s");
  await page.getByRole("link", { name: "kubernetes.cluster/prod-k8s" }).click();
  await page.locator('.resource-graph .react-flow__node[data-id="kubernetes.cluster/prod-k8s"]').waitFor({ timeout: 10000 });
  await page.getByRole("heading", { name: /Bound by/ }).waitFor();
  if (errors.length > 0) fail("the console met errors: " + errors.join("; "));
  const afterViewer = sent.slice(1);
  if (afterViewer.length < 3) fail("too few requests to judge: " + JSON.stringify(sent));
  const whole = afterViewer.filter((s) => s.query);
  if (whole.length > 0) fail("documents sent whole under enforce: " + whole.map((s) => s.name).join(", "));
  if (afterViewer.some((s) => !s.id)) fail("a request without an id: " + JSON.stringify(afterViewer));
  console.log(`· a viewer read the dashboard and the explorer: ${afterViewer.length} requests by id alone (${[...new Set(afterViewer.map((s) => s.name))].join(", ")})`);

  const refused = await gql(viewerToken, `{ resources(first: 500) { edges { node { key desiredState } } } }`);
  const e = refused.errors?.[0];
  if (e?.extensions?.code !== "FORBIDDEN" || e?.extensions?.reason !== "UNTRUSTED_DOCUMENT") fail("a viewer's hand-written query was not refused: " + JSON.stringify(refused));
  console.log("· a viewer's hand-written query: " + e.message);
  const admin = await gql(adminToken, `{ viewer { actor trustedDocuments } }`);
  if (admin.errors || admin.data.viewer.trustedDocuments !== "ENFORCE") fail("an admin's query: " + JSON.stringify(admin));
  console.log("· an admin's hand-written query runs (GraphiQL)");
  console.log("OK: the console under enforced trusted documents");
} catch (e) {
  console.error("FAIL: " + (e.stack ?? e));
  process.exitCode = 1;
} finally {
  await browser.close();
}
