// The console in a real browser: playwright-core drives Debian's Chromium
// against a real `capstan serve` (cmd/capstan's TestConsoleInABrowser
// starts it and an operation that waits at its gate). It signs in, reads
// the viewer, finds the waiting operation first on the live dashboard,
// opens it (simple mode, then the DAG with the gate drawn waiting),
// approves the gate through the API as a second person, and sees the gate
// node, the operation and its dashboard row turn SUCCEEDED without a reload; a bad token is refused on the sign-in
// page. Screenshots go to CAPSTAN_SCREENSHOTS when set.
import { chromium } from "playwright-core";

const url = process.env.CAPSTAN_URL;
const token = process.env.CAPSTAN_TOKEN;
const sreToken = process.env.CAPSTAN_SRE_TOKEN;
const viewerToken = process.env.CAPSTAN_VIEWER_TOKEN;
const op = process.env.CAPSTAN_OPERATION;
const shots = process.env.CAPSTAN_SCREENSHOTS;

function fail(msg) {
  console.error("FAIL: " + msg);
  process.exit(1);
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

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  const page = await browser.newPage();
  const consoleErrors = [];
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });

  // A bad token: the sign-in page says so.
  await page.goto(url + "/");
  await page.getByLabel("Bearer token").fill("not-a-token-at-all-0000");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").waitFor({ timeout: 10000 });

  // The real token: the viewer and the dashboard.
  await page.getByLabel("Bearer token").fill(token);
  await page.keyboard.press("Enter"); // keyboard works as well as the mouse
  const viewer = page.getByLabel("signed in as");
  await viewer.waitFor({ timeout: 10000 });
  const who = await viewer.textContent();
  if (!who.includes("demo") || !who.includes("admin")) fail("viewer line: " + who);
  const firstRow = page.locator("tbody tr").first();
  await firstRow.waitFor({ timeout: 10000 });
  if ((await firstRow.getAttribute("data-status")) !== "WAITING") fail("the waiting operation is not first: " + (await firstRow.textContent()));
  if (shots) await page.screenshot({ path: shots + "/dashboard.png", fullPage: true });

  // The operation: simple mode, then the DAG.
  await firstRow.getByRole("link").click();
  await page.getByText("Current phase").waitFor({ timeout: 10000 });
  if (shots) await page.screenshot({ path: shots + "/operation-simple.png", fullPage: true });
  await page.getByRole("tab", { name: "Advanced" }).click();
  const plan = await gql(token, `query($id: ID!) { operation(id: $id) { plan { nodes { key } } gates { node status } } }`, { id: op });
  const drawn = page.locator(".react-flow__node");
  await drawn.first().waitFor({ timeout: 10000 });
  if ((await drawn.count()) !== plan.operation.plan.nodes.length) fail(`the DAG draws ${await drawn.count()} of ${plan.operation.plan.nodes.length} nodes`);
  const gate = plan.operation.gates.find((g) => g.status === "WAITING");
  if (!gate) fail("no waiting gate");
  const gateNode = page.locator(`.react-flow__node[data-id="${gate.node}"]`);
  if (!(await gateNode.getAttribute("class")).includes("status-waiting_approval")) fail("the gate is not drawn as waiting: " + (await gateNode.getAttribute("class")));
  if (shots) await page.screenshot({ path: shots + "/operation-dag.png", fullPage: true });

  // The gate's drawer: the starter of a production operation may not
  // approve it; the buttons say why.
  await gateNode.click();
  const drawer = page.getByRole("dialog");
  await drawer.getByRole("heading", { name: /Gate: waiting/ }).waitFor({ timeout: 10000 });
  const approve = drawer.getByRole("button", { name: "Approve" });
  if (!(await approve.isDisabled())) fail("the starter may approve their own production gate in the console");
  if (!(await drawer.textContent()).includes("a second person decides")) fail("the drawer does not say why");
  if (shots) await page.screenshot({ path: shots + "/operation-gate.png", fullPage: true });
  await drawer.getByRole("button", { name: "close" }).click();

  // A viewer, in a browser session of its own, sees the same gate and may
  // not decide it either.
  if (viewerToken) {
    const other = await browser.newContext();
    const vpage = await other.newPage();
    await vpage.goto(url + "/");
    await vpage.getByLabel("Bearer token").fill(viewerToken);
    await vpage.getByRole("button", { name: "Sign in" }).click();
    await vpage.getByLabel("signed in as").waitFor({ timeout: 10000 });
    await vpage.goto(url + "/#/operations/" + encodeURIComponent(op));
    await vpage.getByRole("tab", { name: "Advanced" }).click();
    await vpage.locator(`.react-flow__node[data-id="${gate.node}"]`).click();
    const vdrawer = vpage.getByRole("dialog");
    await vdrawer.getByRole("heading", { name: /Gate: waiting/ }).waitFor({ timeout: 10000 });
    if (!(await vdrawer.getByRole("button", { name: "Approve" }).isDisabled())) fail("a viewer may approve in the console");
    if (!(await vdrawer.textContent()).includes("needs one of the roles")) fail("the viewer is not told why");
    await other.close();
  }

  // A second person approves; the DAG and then the dashboard follow live,
  // no reload.
  await gql(sreToken, `mutation($op: ID!, $node: String!) { decideGate(input: {operation: $op, node: $node, approve: true}) { status } }`, { op, node: gate.node });
  await page.locator(`.react-flow__node.status-succeeded[data-id="${gate.node}"]`).waitFor({ timeout: 30000 });
  await page.locator("#operation-title .status-succeeded").waitFor({ timeout: 30000 });
  await page.getByRole("link", { name: "← Operations" }).click();
  await page.locator('tbody tr[data-status="SUCCEEDED"]').first().waitFor({ timeout: 30000 });
  if (shots) await page.screenshot({ path: shots + "/dashboard-live.png", fullPage: true });

  // Signing out forgets the token.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("Bearer token").waitFor();
  const kept = await page.evaluate(() => sessionStorage.getItem("capstan.token"));
  if (kept !== null) fail("the token outlived sign-out");
  const unexpected = consoleErrors.filter((e) => !e.includes("401") && !e.includes("UNAUTHENTICATED"));
  if (unexpected.length > 0) fail("console errors: " + unexpected.join("\n"));
  console.log("OK: signed in, followed the operation live to SUCCEEDED, signed out");
} finally {
  await browser.close();
}
