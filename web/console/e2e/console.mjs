// The console in a real browser: playwright-core drives Debian's Chromium
// against a real `capstan serve` (cmd/capstan's TestConsoleInABrowser
// starts it with three operations: a production install waiting at its
// gate, the seed's kubernetes cluster whose failure the analyzer answers
// with a patch, and a finished staging install that minted a secret).
//
// Every page is checked with axe-core (WCAG 2 A and AA: labels, contrast,
// roles); the gate drawer is opened from the keyboard. When the script
// prints CRASH-SERVER the test kills the server with SIGKILL and starts it
// again on the same address, then answers on stdin. Screenshots go to
// CAPSTAN_SCREENSHOTS.
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";

const url = process.env.CAPSTAN_URL;
const token = process.env.CAPSTAN_TOKEN;
const sreToken = process.env.CAPSTAN_SRE_TOKEN;
const sre2Token = process.env.CAPSTAN_SRE2_TOKEN;
const viewerToken = process.env.CAPSTAN_VIEWER_TOKEN;
const gatedOp = process.env.CAPSTAN_OPERATION;
const secretOp = process.env.CAPSTAN_SECRET_OPERATION;
const shots = process.env.CAPSTAN_SCREENSHOTS;
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const replies = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function fail(msg) {
  console.error("FAIL: " + msg);
  process.exit(1);
}

function step(msg) {
  console.log("· " + msg);
}

// ask has the Go test do something (kill and restart the server, start
// an operation) and returns its answer.
async function ask(what) {
  console.log(what);
  return (await replies.next()).value;
}

async function gql(bearer, query, variables) {
  const resp = await fetch(url + "/graphql", {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + bearer },
    body: JSON.stringify({ query, variables }),
  });
  const body = await resp.json();
  if (body.errors) fail(JSON.stringify(body.errors));
  return body.data;
}

async function eventually(what, f, timeout = 30000) {
  const until = Date.now() + timeout;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > until) fail("never: " + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// accessible runs axe-core on the page as it stands: WCAG 2 A and AA.
// It is evaluated through the DevTools protocol: the console's CSP (no
// inline script) stays on.
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
  await page.evaluate(() => window.scrollTo(0, 0)); // the sticky app bar at the top of the picture
  await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
}

// On a failure, what the last page showed.
let lastPage = null;

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
const consoleErrors = [];
// Requests the browser saw fail (a refused or reset connection, say),
// with when: a failure prints them, so "Failed to fetch" says which.
const failedRequests = [];

async function signedIn(bearer, { keyboard = false } = {}) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
  page.on("requestfailed", (r) => failedRequests.push(`${new Date().toISOString()} ${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
  await page.goto(url + "/");
  await page.getByLabel("Bearer token").fill(bearer);
  if (keyboard) await page.keyboard.press("Enter");
  else await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByLabel("signed in as").waitFor({ timeout: 10000 });
  lastPage = page;
  return page;
}

async function openNode(page, node) {
  const drawn = page.locator(`.react-flow__node[data-id="${node}"]`);
  await drawn.waitFor({ state: "visible", timeout: 10000 });
  await drawn.click();
  return page.getByRole("dialog");
}

try {
  // A bad token: the sign-in page says so.
  {
    const page = await (await browser.newContext()).newPage();
    await page.goto(url + "/");
    await accessible(page, "sign-in");
    await page.getByLabel("Bearer token").fill("not-a-token-at-all-0000");
    await page.getByRole("button", { name: "Sign in" }).click();
    const refused = page.getByRole("alert");
    await refused.waitFor({ timeout: 10000 });
    const said = await refused.textContent();
    if (!said.includes("refused this token") || said.includes("Cannot reach")) fail("a bad token reads: " + said);
    if ((await page.locator("body").textContent()).includes("connecting")) fail("a refused token still says connecting");
    step("a bad token is refused, and the page says the token was refused");
  }

  // Alice signs in from the keyboard; the waiting operation comes first.
  const page = await signedIn(token, { keyboard: true });
  const who = await page.getByLabel("signed in as").textContent();
  if (!who.includes("demo") || !who.includes("admin")) fail("viewer line: " + who);
  const firstRow = page.locator("tbody tr[data-status]").first();
  await firstRow.waitFor({ timeout: 10000 });
  await eventually("the waiting operation first", async () => (await firstRow.getAttribute("data-status")) === "WAITING" || (console.log("first row: " + (await page.locator("tbody").innerHTML()).slice(0, 600)), false));
  // What needs repair: the demo catalog's degraded cluster, linked to the explorer.
  const drift = page.getByRole("region", { name: "drift" });
  await drift.getByRole("link", { name: "kubernetes.cluster/legacy-k8s" }).waitFor({ timeout: 10000 });
  await page.getByRole("list", { name: "operation status legend" }).waitFor();
  await accessible(page, "dashboard");
  await shoot(page, "dashboard");
  step("dashboard: needs attention first, and what needs repair");

  // The operation: simple mode, then the DAG; the gate's drawer opened
  // from the keyboard says why its starter may not approve.
  await page.goto(`${url}/#/operations/${encodeURIComponent(gatedOp)}`);
  await page.getByText("Current phase").waitFor({ timeout: 10000 });
  await accessible(page, "operation, simple mode");
  await shoot(page, "operation-simple");
  // Tabs from the keyboard: arrow keys move between them.
  await page.getByRole("tab", { name: "Simple" }).focus();
  await page.keyboard.press("ArrowRight");
  if ((await page.getByRole("tab", { name: "Advanced" }).getAttribute("aria-selected")) !== "true") fail("ArrowRight does not move to the next tab");
  const plan = await gql(token, `query($id: ID!) { operation(id: $id) { plan { nodes { key } } gates { node status } } }`, { id: gatedOp });
  const drawn = page.locator(".react-flow__node");
  await drawn.first().waitFor({ timeout: 10000 });
  if ((await drawn.count()) !== plan.operation.plan.nodes.length) fail(`the DAG draws ${await drawn.count()} of ${plan.operation.plan.nodes.length} nodes`);
  const gate = plan.operation.gates.find((g) => g.status === "WAITING");
  if (!gate) fail("no waiting gate");
  const gateNode = page.locator(`.react-flow__node[data-id="${gate.node}"]`);
  if (!(await gateNode.locator(".dag-node").getAttribute("class")).includes("status-waiting_approval")) fail("the gate is not drawn as waiting");
  await page.getByRole("list", { name: "node status legend" }).waitFor();
  await accessible(page, "operation, DAG");
  await shoot(page, "operation-dag");
  await gateNode.waitFor({ state: "visible" });
  await gateNode.focus();
  if (!(await gateNode.evaluate((n) => n === document.activeElement))) fail("the gate node does not take the keyboard focus");
  await page.keyboard.press("Enter");
  const drawer = page.getByRole("dialog");
  await drawer.getByRole("heading", { name: /Gate: waiting/ }).waitFor({ timeout: 10000 });
  if (!(await drawer.getByRole("button", { name: "Approve" }).isDisabled())) fail("the starter may approve their own production gate in the console");
  if (await drawer.getByRole("button", { name: "Reject" }).isDisabled()) fail("the starter may not reject (the server allows it)");
  if (!(await drawer.textContent()).includes("started this operation")) fail("the drawer does not say why");
  // The open drawer sits under the app bar: Sign out stays reachable.
  {
    const box = await page.getByRole("button", { name: "Sign out" }).boundingBox();
    const hit = await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.closest("button")?.textContent ?? "", [box.x + box.width / 2, box.y + box.height / 2]);
    if (hit !== "Sign out") fail("the open drawer covers Sign out: " + hit);
  }
  await accessible(page, "gate drawer");
  await shoot(page, "operation-gate");
  await page.keyboard.press("Escape");
  await drawer.waitFor({ state: "detached" });
  step("DAG and gate drawer (keyboard): the starter is told a second person approves");

  // Simulated steps say so, in the DAG and in their drawer; a gate does not.
  const marked = await gql(token, `query($id: ID!) { operation(id: $id) { plan { nodes { key simulated } } } }`, { id: gatedOp });
  const sim = marked.operation.plan.nodes.find((n) => n.simulated);
  if (!sim) fail("the seed's plan has no simulated step");
  const simNode = page.locator(`.react-flow__node[data-id="${sim.key}"]`);
  const simClass = await simNode.locator(".dag-node").getAttribute("class");
  if (!simClass.includes("simulated") || !(await simNode.textContent()).includes("simulated")) fail(`simulated step ${sim.key} is not marked in the DAG`);
  if ((await gateNode.locator(".dag-node").getAttribute("class")).includes("simulated")) fail("a gate is marked simulated");
  await simNode.focus();
  await page.keyboard.press("Enter");
  await drawer.getByRole("note").filter({ hasText: "Simulated" }).waitFor({ timeout: 10000 });
  await page.keyboard.press("Escape");
  await drawer.waitFor({ state: "detached" });
  step("simulated steps are marked simulated in the DAG and in their drawer");

  // A secret: masked; alice (admin) reveals it with a reason.
  await page.goto(`${url}/#/operations/${encodeURIComponent(secretOp)}`);
  await page.getByRole("tab", { name: "Advanced" }).click();
  const mint = await openNode(page, "mint");
  await mint.getByLabel("masked secret").waitFor({ timeout: 10000 });
  await mint.getByRole("button", { name: "Reveal…" }).click();
  await mint.getByLabel(/Why do you need it/).fill("console test: checking the minted token");
  await mint.getByRole("button", { name: "Reveal", exact: true }).click();
  const revealed = (await mint.getByLabel("revealed secret").textContent()).trim();
  if (!revealed.startsWith("tok-")) fail("revealed: " + revealed);
  await mint.getByRole("button", { name: "Hide" }).click();
  await mint.getByLabel("masked secret").waitFor();
  if ((await page.content()).includes(revealed)) fail("the secret stayed on the page after Hide");
  step("a secret is masked, revealed with a reason, masked again");

  // Victor (viewer) sees everything and no button: no approve, no reveal.
  {
    const vpage = await signedIn(viewerToken);
    await vpage.goto(`${url}/#/operations/${encodeURIComponent(gatedOp)}`);
    await vpage.getByRole("tab", { name: "Advanced" }).click();
    const vdrawer = await openNode(vpage, gate.node);
    await vdrawer.getByRole("heading", { name: /Gate: waiting/ }).waitFor({ timeout: 10000 });
    if ((await vdrawer.getByRole("button", { name: "Approve" }).count()) !== 0) fail("a viewer sees an approve button");
    if (!(await vdrawer.textContent()).includes("Read-only")) fail("the viewer is not told why there are no buttons");
    await vpage.goto(`${url}/#/operations/${encodeURIComponent(secretOp)}`);
    await vpage.getByRole("tab", { name: "Advanced" }).click();
    const vmint = await openNode(vpage, "mint");
    await vmint.getByLabel("masked secret").waitFor({ timeout: 10000 });
    if ((await vmint.getByRole("button", { name: /Reveal/ }).count()) !== 0) fail("a viewer sees a reveal button");
    await vpage.getByRole("tab", { name: "Timeline" }).click();
    await vpage.locator(".timeline .event").first().waitFor({ timeout: 10000 });
    if ((await vpage.content()).includes(revealed)) fail("the secret's value reached a viewer's page");
    await vpage.context().close();
    step("a viewer sees no approve or reveal button, and never the secret");
  }

  // The timeline follows live and resumes from its cursor across a kill
  // -9 of the server: never a gap, never a duplicate.
  await page.goto(`${url}/#/operations/${encodeURIComponent(gatedOp)}`);
  await page.getByRole("tab", { name: "Timeline" }).click();
  const list = page.getByLabel("timeline events");
  await list.locator(".event").first().waitFor({ timeout: 10000 });
  await gql(sreToken, `mutation($op: ID!, $node: String!) { decideGate(input: {operation: $op, node: $node, approve: true}) { status } }`, { op: gatedOp, node: gate.node });
  await ask("CRASH-SERVER");
  await page.getByRole("status").filter({ hasText: /resumed \d+× from its cursor/ }).waitFor({ timeout: 60000 });
  await page.getByText(/events · complete/).waitFor({ timeout: 60000 });
  const api = await gql(token, `query($id: ID!) { operation(id: $id) { status timeline(first: 500) { edges { node { sequence } } } } }`, { id: gatedOp });
  if (api.operation.status !== "SUCCEEDED") fail("the operation ended " + api.operation.status);
  const total = api.operation.timeline.edges.length;
  const shown = Number(await list.getAttribute("data-count"));
  const lastShown = Number(await list.locator(".event").last().getAttribute("data-sequence"));
  if (shown !== total || lastShown !== total) fail(`the timeline shows ${shown} events up to #${lastShown}; the operation has ${total}`);
  await eventually("the header no longer says reconnecting", async () => (await page.locator(".link-reconnecting").count()) === 0, 10000);
  await accessible(page, "timeline");
  await shoot(page, "timeline");
  await page.getByRole("tab", { name: "Advanced" }).click();
  await page.locator(`.react-flow__node[data-id="${gate.node}"] .dag-node.status-succeeded`).waitFor({ timeout: 30000 });
  await page.locator("#operation-title .status-succeeded").waitFor({ timeout: 30000 });
  step(`timeline: ${total} events, each once, across a server kill -9; the gate and operation turned SUCCEEDED live`);
  // A finished operation takes no patch: no form, a note instead.
  await page.getByRole("tab", { name: "Patches" }).click();
  await page.getByText("The operation has ended: it takes no more patches.").waitFor({ timeout: 10000 });
  if ((await page.getByRole("form", { name: "propose a patch" }).count()) !== 0) fail("a finished operation offers the patch form");
  await page.getByRole("link", { name: "← Operations" }).click();
  await page.locator('tbody tr[data-status="SUCCEEDED"]').first().waitFor({ timeout: 30000 });
  await shoot(page, "dashboard-live");

  // Patches: the analyzer's proposal, approved by bob (the second person)
  // looking at its diff; alice proposes one from a template, bob approves
  // it, alice reverts it.
  const patchOp = await ask("START-SEED-CLUSTER");
  const bob = await signedIn(sreToken);
  await bob.goto(`${url}/#/operations/${encodeURIComponent(patchOp)}`);
  await bob.getByRole("tab", { name: "Patches" }).click();
  const analyzed = bob.locator(".patches > li", { hasText: "ai-agent:rules" });
  await analyzed.waitFor({ timeout: 60000 });
  await analyzed.getByRole("button").first().click();
  await analyzed.locator(".dag-node.diff-added").first().waitFor({ timeout: 10000 });
  const analysisText = await analyzed.getByLabel("analysis").textContent();
  if (!analysisText.includes("Diagnosis by ai-agent:rules")) fail("the patch's analysis does not say who answered: " + analysisText);
  if (!(await analyzed.locator("table.fielddiff").textContent()).includes("configure-registry-mirror")) fail("the field diff does not name the added node");
  const digest = (await analyzed.locator(".digest").textContent()).trim();
  const before = await gql(token, `query($id: ID!) { operation(id: $id) { patches { digest status } } }`, { id: patchOp });
  if (!before.operation.patches.some((p) => p.digest === digest && p.status === "PROPOSED")) fail("the digest shown is not the patch's");
  await accessible(bob, "patch with its diff");
  await shoot(bob, "patch-diff");
  await analyzed.getByRole("button", { name: "Approve patch" }).click();
  await analyzed.getByText("The patch is proposed.").waitFor({ timeout: 15000 });
  await analyzed.getByText(/prod-second-person: 2 of .*\(1 outstanding\)/).waitFor({ timeout: 15000 });
  step("bob approved the analyzer's patch on the digest shown, after its graph and field diff: in prod it waits for a second person");
  // In prod an analyzer's patch needs two people: carol is the second.
  const carol = await signedIn(sre2Token);
  await carol.goto(`${url}/#/operations/${encodeURIComponent(patchOp)}`);
  await carol.getByRole("tab", { name: "Patches" }).click();
  const second = carol.locator(".patches > li", { hasText: "ai-agent:rules" });
  await second.waitFor({ timeout: 30000 });
  await second.getByRole("button").first().click();
  await second.getByRole("button", { name: "Approve patch" }).click();
  await second.getByText("The patch is applied.").waitFor({ timeout: 15000 });
  await carol.context().close();
  step("carol approved it as the second person: applied");

  // The retried node and its stage as the DAG shows them: the stage takes
  // its children's status and they hang from it; the retried job's drawer
  // lists its artifact once and says how its attempts count.
  await bob.getByRole("tab", { name: "Advanced" }).click();
  await bob.locator('.react-flow__node[data-id="init-control-plane"] .dag-node.status-succeeded').waitFor({ timeout: 60000 });
  await bob.locator('.react-flow__node[data-id="install-runtime"] .dag-node.stage.status-succeeded').waitFor({ timeout: 10000 });
  if ((await bob.locator('[data-testid="rf__edge-install-runtime=>detect-package-manager"]').count()) !== 1) fail("the stage's first child is not drawn from it");
  const stage = await openNode(bob, "install-runtime");
  await stage.getByRole("heading", { name: /Its \d+ steps/ }).waitFor({ timeout: 10000 });
  const stageText = await stage.textContent();
  if (!stageText.includes("succeeded") || stageText.includes("pending")) fail("the stage's drawer reads: " + stageText.slice(0, 300));
  await bob.keyboard.press("Escape");
  const retried = await openNode(bob, "init-control-plane");
  await retried.getByRole("heading", { name: "Artifacts" }).waitFor({ timeout: 10000 });
  const retriedText = await retried.textContent();
  const kubeconfigs = await retried.locator("li", { hasText: "kubeconfig-admin" }).count();
  if (kubeconfigs !== 1) fail(`kubeconfig-admin is listed ${kubeconfigs} times`);
  if (retriedText.includes("at most")) fail("the retried job's drawer still reads: " + retriedText.slice(0, 400));
  if (!/attempt 3: past the policy's, each retry by a patch or a person is one more attempt/.test(retriedText)) fail("the drawer does not say how attempt 3 came: " + retriedText.slice(0, 400));
  await accessible(bob, "stage and retried job");
  await shoot(bob, "operation-stages");
  await bob.keyboard.press("Escape");
  step("a stage takes its children's status and they hang from it; a retried job lists its artifact once and explains its attempts");

  await page.goto(`${url}/#/operations/${encodeURIComponent(patchOp)}`);
  await page.getByRole("tab", { name: "Patches" }).click();
  const form = page.getByRole("form", { name: "propose a patch" });
  await form.getByLabel("Change", { exact: true }).selectOption("INSERT_AFTER");
  await form.getByLabel("Node", { exact: true }).selectOption("verify-cluster");
  await form.getByLabel("Template", { exact: true }).selectOption("smoke-test");
  await form.getByLabel("Reason").fill("console: smoke test the cluster");
  await form.getByRole("button", { name: "Propose" }).click();
  const mine = page.locator(".patches > li", { hasText: "console: smoke test the cluster" });
  await mine.waitFor({ timeout: 15000 });
  await mine.locator(".dag-node.diff-added").first().waitFor({ timeout: 10000 });
  if (!(await mine.getByRole("button", { name: "Approve patch" }).isDisabled())) fail("the proposer may approve their own patch");
  await bob.reload();
  await bob.getByRole("tab", { name: "Patches" }).click();
  const toApprove = bob.locator(".patches > li", { hasText: "console: smoke test the cluster" });
  await toApprove.getByRole("button").first().click();
  await toApprove.getByRole("button", { name: "Approve patch" }).click();
  await toApprove.getByText("The patch is applied.").waitFor({ timeout: 15000 });
  await page.locator('.patches > li[data-status="APPLIED"]', { hasText: "console: smoke test the cluster" }).waitFor({ timeout: 15000 });
  page.once("dialog", (d) => d.accept("console: not needed after all"));
  await mine.getByRole("button", { name: "Revert" }).click();
  await page.getByText(/Revert proposed: /).waitFor({ timeout: 15000 });
  const reverts = await gql(token, `query($id: ID!) { operation(id: $id) { patches { status reverts { reason } } } }`, { id: patchOp });
  if (!reverts.operation.patches.some((p) => p.status === "PROPOSED" && p.reverts?.reason === "console: smoke test the cluster")) fail("no revert proposed");
  await bob.context().close();
  step("alice proposed a patch from a template, bob approved it, alice proposed its revert");

  // Plan review: a new advanced intent, its bindings with every candidate,
  // an edit from a template, start.
  await page.getByRole("link", { name: "Plans" }).click();
  const intent = page.getByRole("form", { name: "new intent" });
  await intent.getByLabel("Action").fill("create");
  await intent.getByLabel("Resource type").fill("kubernetes.cluster");
  await intent.getByLabel("Desired result (JSON)").fill('{"name": "review-k8s"}');
  await intent.getByLabel("Constraints (JSON)").fill('{"environment": "staging"}');
  await intent.getByLabel("Mode").selectOption("ADVANCED");
  await intent.getByRole("button", { name: "Plan it" }).click();
  await page.getByRole("heading", { name: /Plan: create kubernetes.cluster/ }).waitFor({ timeout: 15000 });
  if ((await page.locator("header").textContent()).includes("idle")) fail("the header says idle");
  const desired = page.getByRole("list", { name: "desired result" }).first();
  if (!(await desired.textContent()).includes("review-k8s")) fail("the desired result is not listed");
  if ((await page.locator("main").textContent()).includes('{"name"')) fail("raw JSON on the plan page");
  const hosts = page.locator("details.binding", { hasText: "hosts" });
  await hosts.locator("summary").click();
  await hosts.locator("tr.selected").first().waitFor();
  if ((await hosts.locator("tr.rejected").count()) === 0) fail("no rejected candidate shown with its reason");
  const checks = await hosts.locator("table").textContent();
  if (/\b([a-z_]+): \1:/.test(checks)) fail("a check names its key twice: " + checks.match(/\b([a-z_]+): \1:[^✓✗]*/)[0]);
  const edit = page.getByRole("form", { name: "edit the plan" });
  await edit.getByLabel("Change", { exact: true }).selectOption("INSERT_AFTER");
  await edit.getByLabel("Node", { exact: true }).selectOption("verify-cluster");
  await edit.getByLabel("Template", { exact: true }).selectOption("smoke-test");
  await edit.getByRole("button", { name: "Apply edit" }).click();
  await page.getByText(/Revision 2: the plan is ready/).waitFor({ timeout: 15000 });
  await page.locator(".react-flow__node", { hasText: "Smoke test" }).waitFor({ timeout: 10000 });
  // The cluster preview dry-runs the plan's kubernetes steps, on demand:
  // a kubeadm create (simulated) applies nothing to a cluster.
  await page.getByRole("button", { name: "Preview cluster changes" }).click();
  await page.getByRole("status").filter({ hasText: "This plan applies nothing to a cluster." }).waitFor({ timeout: 15000 });
  await accessible(page, "plan review");
  await shoot(page, "plan-review");
  await page.getByRole("button", { name: "Start operation" }).click();
  await page.waitForURL(/#\/operations\//, { timeout: 15000 });
  await page.locator("#operation-title .status").waitFor({ timeout: 15000 });
  step("plan review: candidates with reasons, an edit from a template, its cluster preview, start");

  // Explorer: search, dependencies both ways, history.
  await page.getByRole("link", { name: "Explorer" }).click();
  await page.getByLabel("Search resources").fill("prod-k8s");
  await page.getByRole("link", { name: "kubernetes.cluster/prod-k8s" }).click();
  await page.getByRole("heading", { name: "kubernetes.cluster/prod-k8s" }).waitFor({ timeout: 10000 });
  const deps = page.getByRole("table", { name: "dependencies" });
  await deps.locator("tbody tr").first().waitFor();
  await page.getByLabel("what depends on it").check();
  await eventually("incoming dependencies", async () => (await deps.textContent()).includes("minio"), 10000);
  await page.getByLabel("Depth").fill("1");
  // The production installs bound prod-k8s as their cluster.
  await eventually("the plans that bind it", async () => (await page.getByRole("list", { name: "bindings" }).textContent()).includes("install minio.instance"), 10000);
  // Health: a cluster's type observes nothing: assessing it says so, typed.
  const health = page.getByRole("region", { name: "health" });
  await health.getByText(/Not assessed since its last operation/).waitFor({ timeout: 10000 });
  await health.getByRole("button", { name: "Assess now" }).click();
  await eventually("the refusal of an assessment", async () => ((await health.getByRole("alert").textContent().catch(() => "")) ?? "").includes("declares no observe probes"), 10000);
  // The neighbourhood as a graph: a node per resource, with its health.
  const graph = page.getByRole("group", { name: "dependency graph" });
  await graph.locator('.react-flow__node[data-id="vault.instance/prod-vault"]').waitFor({ timeout: 10000 });
  await eventually("the graph's health badges", async () => (await graph.textContent()).includes("healthy"), 10000);
  // Both ways: what it runs on and what runs on it, in one graph (the
  // table walks one way only).
  await page.getByLabel("both").check();
  await graph.locator('.react-flow__node[data-id="compute.node/prod-worker-1"]').waitFor({ timeout: 10000 });
  await graph.locator('.react-flow__node[data-id="vault.instance/prod-vault"]').waitFor({ timeout: 10000 });
  await page.getByRole("status").filter({ hasText: /\d+ resources drawn/ }).waitFor({ timeout: 10000 });
  await page.getByLabel("what depends on it").check();
  // What breaks if it fails, counted.
  const impact = page.getByRole("region", { name: "impact" });
  await impact.getByRole("button", { name: "Weigh its impact" }).click();
  await impact.getByRole("status").filter({ hasText: /\d+ resources depend on it/ }).waitFor({ timeout: 10000 });
  await impact.getByRole("table", { name: "impact by type and environment" }).getByText("vault.instance").waitFor();
  // Why the vault depends on it: the path, hop by hop.
  const paths = page.getByRole("region", { name: "paths" });
  await paths.getByLabel("Path to").fill("vault.instance/prod-vault");
  await paths.getByLabel("Follow").selectOption("INCOMING");
  await paths.getByRole("button", { name: "Find paths" }).click();
  await paths.getByRole("list", { name: "found paths" }).getByRole("link", { name: "vault.instance/prod-vault" }).waitFor({ timeout: 10000 });
  await paths.getByLabel("Path to").fill("nothing/at-all");
  await paths.getByRole("button", { name: "Find paths" }).click();
  await paths.getByRole("alert").filter({ hasText: "No resource has the key nothing/at-all" }).waitFor({ timeout: 10000 });
  await accessible(page, "explorer");
  await shoot(page, "explorer");
  step("explorer: search, dependencies both ways with depth as a graph, health, impact, paths");

  // The dark theme: the system's, and the viewer's choice kept.
  {
    const dark = await browser.newContext({ viewport: { width: 1400, height: 900 }, colorScheme: "dark" });
    const dpage = await dark.newPage();
    await dpage.goto(url + "/");
    await dpage.getByLabel("Bearer token").fill(token);
    await dpage.getByRole("button", { name: "Sign in" }).click();
    await dpage.locator("tbody tr[data-status]").first().waitFor({ timeout: 10000 });
    const bg = await dpage.evaluate(() => getComputedStyle(document.body).backgroundColor);
    if (bg !== "rgb(13, 17, 23)") fail("the dark scheme is not applied: " + bg);
    await accessible(dpage, "dashboard, dark");
    await shoot(dpage, "dashboard-dark");
    await dpage.goto(`${url}/#/operations/${encodeURIComponent(patchOp)}`);
    await dpage.getByRole("tab", { name: "Advanced" }).click();
    await dpage.locator(".react-flow__node").first().waitFor({ timeout: 10000 });
    await accessible(dpage, "operation DAG, dark");
    await shoot(dpage, "operation-dark");
    // The toggle: system → light → dark, kept across a reload.
    await dpage.getByRole("button", { name: /colour theme: system/ }).click();
    if ((await dpage.evaluate(() => document.documentElement.dataset.theme)) !== "light") fail("the toggle does not choose light");
    await dpage.reload();
    await dpage.getByRole("button", { name: /colour theme: light/ }).waitFor({ timeout: 10000 });
    if ((await dpage.evaluate(() => getComputedStyle(document.body).backgroundColor)) === "rgb(13, 17, 23)") fail("light was not kept");
    await dark.close();
    step("dark theme: applied from the system, accessible, and a choice is kept");
  }

  // Signing out forgets the token.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("Bearer token").waitFor();
  if ((await page.evaluate(() => sessionStorage.getItem("capstan.token"))) !== null) fail("the token outlived sign-out");
  // The crash drops connections on purpose: the browser logs those.
  const unexpected = consoleErrors.filter((e) => !/401|UNAUTHENTICATED|WebSocket|ERR_CONNECTION_REFUSED|Failed to fetch|ERR_EMPTY_RESPONSE|net::/.test(e));
  if (unexpected.length > 0) fail("console errors: " + unexpected.join("\n"));
  console.log("OK: every page, live across a server crash, as admin, SRE and viewer");
} catch (e) {
  console.error("FAIL: " + (e.stack ?? e));
  if (lastPage) console.error("the page showed:\n" + (await lastPage.locator("main").innerHTML().catch(() => "?")).slice(-4000));
  if (failedRequests.length > 0) console.error("requests that failed:\n" + failedRequests.slice(-20).join("\n"));
  process.exitCode = 1;
} finally {
  await browser.close();
}
process.exit();
