// The graph explorer in a real browser: playwright-core drives Debian's
// Chromium against a real `capstan serve` on which cmd/capstan's
// TestGraphExplorerInABrowser ran the seed's story (make demo-sim):
// prod-tempo runs on prod-k8s and uses prod-vault and a MinIO a
// sub-operation made for it. The walk: open prod-k8s, expand it (and
// collapse it), move along its edges from the keyboard, filter, find a
// node and read its bindings, weigh the impact of prod-k8s failing, find
// the path from prod-tempo to prod-vault, and see prod-tempo's node
// recolour when an assessment changes its health — in both themes, with
// axe-core (WCAG 2 A and AA) on each. Screenshots go to
// CAPSTAN_SCREENSHOTS.
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";

const url = process.env.CAPSTAN_URL;
const token = process.env.CAPSTAN_TOKEN;
const shots = process.env.CAPSTAN_SCREENSHOTS;
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const replies = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

// ask has the Go test do something (run the seed's story again) and
// returns its answer.
async function ask(what) {
  console.log(what);
  return (await replies.next()).value;
}

function fail(msg) {
  throw new Error(msg);
}

function step(msg) {
  console.log("· " + msg);
}

async function gql(query, variables) {
  const resp = await fetch(url + "/graphql", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + token },
    body: JSON.stringify({ query, variables }),
  });
  const body = await resp.json();
  if (body.errors) fail(JSON.stringify(body.errors));
  return body.data;
}

async function accessible(page, where) {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } });
    return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ")})`);
  });
  if (violations.length) fail(`accessibility on ${where}:\n  ${violations.join("\n  ")}`);
}

async function shoot(page, name) {
  if (!shots) return;
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
}

const node = (page, key) => page.getByRole("group", { name: "dependency graph" }).locator(`.react-flow__node[data-id="${key}"]`);

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
let lastPage = null;
const consoleErrors = [];

async function signedIn(scheme) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, colorScheme: scheme });
  const page = await context.newPage();
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
  await page.goto(url + "/");
  await page.getByLabel("Bearer token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByLabel("signed in as").waitFor({ timeout: 10000 });
  lastPage = page;
  return page;
}

async function open(page, key) {
  await page.getByRole("link", { name: "Explorer" }).click();
  await page.getByLabel("Search resources").fill(key.split("/")[1]);
  await page.getByRole("link", { name: key, exact: true }).click();
  await page.getByRole("heading", { name: key }).waitFor({ timeout: 10000 });
  await node(page, key).waitFor({ timeout: 10000 });
}

try {
  const page = await signedIn("light");

  // 1. Open prod-k8s: what it depends on, drawn as a graph.
  await open(page, "kubernetes.cluster/prod-k8s");
  await node(page, "compute.node/prod-worker-1").waitFor({ timeout: 10000 });
  if ((await node(page, "tempo.instance/prod-tempo").count()) !== 0) fail("prod-tempo is drawn before prod-k8s is expanded");
  step("opened prod-k8s: the nodes it runs on");

  // 2. Expand it: what runs on it joins the graph; collapse takes it away.
  const expand = page.getByRole("button", { name: "expand kubernetes.cluster/prod-k8s" });
  await expand.click();
  await node(page, "tempo.instance/prod-tempo").waitFor({ timeout: 10000 });
  await node(page, "vault.instance/prod-vault").waitFor();
  const tempoEdge = page.locator('[data-testid="rf__edge-tempo.instance/prod-tempo-USES->vault.instance/prod-vault"]');
  if ((await tempoEdge.count()) !== 1) fail("the edge from prod-tempo to prod-vault is not drawn with its relationship");
  if (!(await node(page, "tempo.instance/prod-tempo").textContent()).includes("prod")) fail("a node does not name its environment");
  await page.getByRole("button", { name: "collapse kubernetes.cluster/prod-k8s" }).click();
  await node(page, "tempo.instance/prod-tempo").waitFor({ state: "detached", timeout: 10000 });
  await node(page, "compute.node/prod-worker-1").waitFor();
  await expand.click();
  await node(page, "tempo.instance/prod-tempo").waitFor({ timeout: 10000 });
  step("expanded prod-k8s (what runs on it joined), collapsed it, expanded it again");

  // The keyboard: focus the root, → moves along an edge to what it
  // points at, Enter selects.
  await node(page, "kubernetes.cluster/prod-k8s").focus();
  await page.keyboard.press("ArrowRight");
  const moved = await page.evaluate(() => document.activeElement?.getAttribute("data-id"));
  if (!moved || !moved.startsWith("compute.node/")) fail("→ from prod-k8s focused " + moved);
  await page.keyboard.press("ArrowLeft");
  const back = await page.evaluate(() => document.activeElement?.getAttribute("data-id"));
  if (!back) fail("← focused nothing");
  await page.keyboard.press("Enter");
  await page.getByRole("complementary", { name: "selected resource" }).getByRole("heading", { name: back }).waitFor({ timeout: 10000 });
  step(`keyboard: → to ${moved}, ← to ${back}, Enter selects it`);

  // Find a node by name: selected, with its bindings.
  await page.getByLabel("Find in graph").fill("prod-tempo");
  await page.getByRole("button", { name: "Find", exact: true }).click();
  const panel = page.getByRole("complementary", { name: "selected resource" });
  await panel.getByRole("heading", { name: "tempo.instance/prod-tempo" }).waitFor({ timeout: 10000 });
  await eventually("find focuses the node", async () => (await page.evaluate(() => document.activeElement?.getAttribute("data-id"))) === "tempo.instance/prod-tempo");
  const served = panel.getByRole("list", { name: "providers serving it" });
  await served.getByRole("link", { name: "vault.instance/prod-vault" }).waitFor({ timeout: 10000 });
  if (!(await served.textContent()).includes("meets every constraint and policy")) fail("a binding does not say why it was chosen: " + (await served.textContent()));
  await page.getByLabel("Find in graph").fill("prod-vault");
  await page.getByRole("button", { name: "Find", exact: true }).click();
  const serves = panel.getByRole("list", { name: "plans it serves" });
  await serves.getByRole("link", { name: /install tempo.instance/ }).waitFor({ timeout: 10000 });
  if (!/secrets \(secret.store\)/.test(await serves.textContent())) fail("the provider's binding does not name its requirement: " + (await serves.textContent()));
  await serves.getByRole("link", { name: "install" }).first().waitFor();
  step("find focused prod-tempo (served by prod-vault, with the reason) and prod-vault (serves the tempo install, with its operation)");

  // Filter: only runs_on — expanded again, prod-tempo is drawn (it runs
  // on prod-k8s) but not its uses edge.
  await page.getByText("Filter the graph").click();
  await page.getByRole("checkbox", { name: "runs on", exact: true }).check();
  await node(page, "tempo.instance/prod-tempo").waitFor({ state: "detached", timeout: 10000 });
  await expand.click();
  await node(page, "tempo.instance/prod-tempo").waitFor({ timeout: 10000 });
  await node(page, "vault.instance/prod-vault").waitFor();
  if ((await tempoEdge.count()) !== 0) fail("the filter still draws a uses edge");
  await page.getByRole("checkbox", { name: "runs on", exact: true }).uncheck();
  await node(page, "compute.node/prod-worker-1").waitFor({ timeout: 10000 });
  await page.getByText("Filter the graph").click();
  step("filtered to runs_on: the uses edge is gone; cleared");

  // 3. The impact of its failure: counted, and marked on the graph.
  await expand.click();
  await node(page, "tempo.instance/prod-tempo").waitFor({ timeout: 10000 });
  const impact = page.getByRole("region", { name: "impact" });
  await impact.getByRole("button", { name: "Weigh its impact" }).click();
  await impact.getByRole("status").filter({ hasText: /\d+ resources depend on it/ }).waitFor({ timeout: 10000 });
  await impact.getByRole("table", { name: "impact by type and environment" }).getByText("tempo.instance").waitFor();
  await eventually("prod-tempo marked affected", async () => (await node(page, "tempo.instance/prod-tempo").textContent()).includes("affected"));
  await accessible(page, "graph explorer, light");
  await shoot(page, "graph-explorer");
  step("impact of prod-k8s failing: counted by type, prod-tempo marked affected");

  // 4. Why prod-tempo depends on prod-vault: the path, hop by hop.
  await open(page, "tempo.instance/prod-tempo");
  const paths = page.getByRole("region", { name: "paths" });
  await paths.getByLabel("Path to").fill("vault.instance/prod-vault");
  await paths.getByRole("button", { name: "Find paths" }).click();
  const found = paths.getByRole("list", { name: "found paths" });
  await found.getByRole("link", { name: "vault.instance/prod-vault" }).first().waitFor({ timeout: 10000 });
  if (!(await found.locator("li").first().textContent()).includes("uses")) fail("the path does not name its hop: " + (await found.textContent()));
  await eventually("prod-vault marked on the path", async () => (await node(page, "vault.instance/prod-vault").textContent()).includes("on the path"));
  step("the path from prod-tempo to prod-vault: uses, marked on the graph");

  // 5. A health change recolours the node, with no reload.
  const tempo = node(page, "tempo.instance/prod-tempo");
  const before = await tempo.locator(".graph-node").getAttribute("data-health");
  const id = (await gql(`{ resource(key: "tempo.instance/prod-tempo") { id } }`)).resource.id;
  const assessed = await gql(`mutation($id: ID!) { assessResource(input: { resource: $id }) { healthStatus } }`, { id });
  const after = assessed.assessResource.healthStatus;
  if (after === before) fail(`the assessment left prod-tempo ${after}: no change to see`);
  await tempo.locator(`.graph-node[data-health="${after}"]`).waitFor({ timeout: 10000 });
  if (!(await tempo.textContent()).includes(after.toLowerCase())) fail("the recoloured node does not say its health in words");
  step(`prod-tempo recoloured live: ${before} → ${after}`);
  // A finished operation recolours it too: the story again installs
  // prod-tempo in place, and its end sets its health.
  if ((await ask("RUN-STORY")) !== "done") fail("the story did not run again");
  await tempo.locator('.graph-node[data-health="HEALTHY"]').waitFor({ timeout: 30000 });
  step(`the story's second install ended: prod-tempo recoloured live, ${after} → HEALTHY`);

  // Both themes: the dark one, accessible, for the docs.
  const dark = await signedIn("dark");
  await open(dark, "kubernetes.cluster/prod-k8s");
  await dark.getByRole("button", { name: "expand kubernetes.cluster/prod-k8s" }).click();
  await node(dark, "tempo.instance/prod-tempo").waitFor({ timeout: 10000 });
  const bg = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
  if (bg !== "rgb(13, 17, 23)") fail("the dark scheme is not applied: " + bg);
  await accessible(dark, "graph explorer, dark");
  await shoot(dark, "graph-explorer-dark");
  step("dark theme: accessible");

  const unexpected = consoleErrors.filter((e) => !/WebSocket|net::/.test(e));
  if (unexpected.length > 0) fail("console errors: " + unexpected.join("\n"));
  console.log("OK: the graph walked: opened, expanded, impact, path, live recolour, both themes");
} catch (e) {
  console.error("FAIL: " + (e.stack ?? e));
  if (lastPage) console.error("the page showed:\n" + (await lastPage.locator("main").innerHTML().catch(() => "?")).slice(-3000));
  process.exitCode = 1;
} finally {
  await browser.close();
}
process.exit(); // stdin (the test's answers) would keep the process alive

async function eventually(what, f, timeout = 10000) {
  const until = Date.now() + timeout;
  for (;;) {
    if (await f()) return;
    if (Date.now() > until) fail("never: " + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}
