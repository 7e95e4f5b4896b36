// The plan's cluster preview in a real browser: playwright-core drives
// Debian's Chromium against a real `capstan serve` whose catalog holds a
// real Kubernetes API (cmd/capstan's TestClusterPreviewInABrowser plans
// an app on it). On the plan's page, "Preview cluster changes" shows each
// object the plan would apply, what it would be and the fields it would
// set; the page passes axe-core's WCAG 2 A and AA rules.
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const url = process.env.CAPSTAN_URL;
const token = process.env.CAPSTAN_TOKEN;
const plan = process.env.CAPSTAN_PLAN;
const object = process.env.CAPSTAN_OBJECT;
const shots = process.env.CAPSTAN_SCREENSHOTS;
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

function fail(msg) {
  console.error("FAIL: " + msg);
  process.exit(1);
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ["--no-sandbox"] });
try {
  const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  await page.goto(url + "/");
  await page.getByLabel("Bearer token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByLabel("signed in as").waitFor({ timeout: 10000 });
  await page.goto(url + "/#/plans/" + encodeURIComponent(plan));
  await page.getByRole("heading", { name: /Plan: create kubernetes.app/ }).waitFor({ timeout: 15000 });
  await page.getByRole("button", { name: "Preview cluster changes" }).click();
  const table = page.getByRole("table", { name: "cluster changes" });
  await table.waitFor({ timeout: 30000 });
  const row = table.locator("tbody tr", { hasText: object });
  await row.waitFor({ timeout: 5000 });
  const text = await row.textContent();
  for (const want of ["apply-app", "created", "spec.replicas: — → 2", "kubernetes.cluster/lab-k8s"]) {
    if (!text.includes(want)) fail(`the row of ${object} lacks ${JSON.stringify(want)}: ${text}`);
  }
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } });
    return r.violations.map((v) => `${v.id}: ${v.help}`);
  });
  if (violations.length) fail("accessibility: " + violations.join("; "));
  if (shots) await page.screenshot({ path: `${shots}/cluster-preview.png`, fullPage: true });
  console.log("OK: the preview shows " + object + " created with its fields");
} finally {
  await browser.close();
}
