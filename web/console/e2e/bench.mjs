// The console's benchmarks in headless Chromium against a real server
// (cmd/capstan's BenchmarkConsoleInABrowser starts it with a 500-node
// operation waiting at its first gate). The page is measured from the
// outside: a wrapper around WebSocket stamps each message as the client
// receives it, a MutationObserver stamps each node's new status as it
// reaches the DOM, and the next animation frame stamps it on screen. It
// prints one line "FIGURES {json}" with every figure in milliseconds.
import { chromium } from "playwright-core";
import { createInterface } from "node:readline";

const url = process.env.CAPSTAN_URL;
const token = process.env.CAPSTAN_TOKEN;
const sreToken = process.env.CAPSTAN_SRE_TOKEN;
const op = process.env.CAPSTAN_OPERATION;
// The dashboard's operations and how long it is measured: a thousand over
// ten seconds, fewer over less at make test's small size.
const operations = Number(process.env.CAPSTAN_BENCH_OPERATIONS || 1000);
const windowMs = Number(process.env.CAPSTAN_BENCH_WINDOW_MS || 10000);
const replies = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

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
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
}

const round = (x) => Math.round(x * 10) / 10;

// Installed before the console loads: stamps what the client receives and
// what reaches the screen.
function instrument() {
  window.__received = [];
  window.__painted = [];
  window.__liveOps = 0;
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (m) => {
        const t = performance.now();
        const msg = JSON.parse(m.data);
        const ev = msg.payload?.data?.operationEvents?.node;
        if (ev && ev.runStatus && ev.node) window.__received.push({ node: ev.node, status: ev.runStatus, t });
        if (msg.payload?.data?.operations) window.__liveOps++;
      });
    }
  };
  new MutationObserver((records) => {
    const t = performance.now();
    const seen = [];
    for (const r of records) {
      const el = r.target;
      if (!el.classList?.contains("dag-node")) continue;
      const m = /status-([a-z_]+)/.exec(el.className);
      if (m) seen.push({ node: el.getAttribute("data-id"), status: m[1].toUpperCase(), dom: t });
    }
    if (seen.length) requestAnimationFrame((frame) => { for (const s of seen) window.__painted.push({ ...s, frame }); });
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ["class"] });
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
const figures = {};
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.addInitScript(instrument);
  const page = await context.newPage();
  await page.goto(url + "/");
  await page.getByLabel("Bearer token").fill(token);
  await page.keyboard.press("Enter");
  await page.getByLabel("signed in as").waitFor({ timeout: 10000 });

  // 1. A 500-node plan's DAG, first render: from the click on Advanced to
  // every node drawn and measured (React Flow shows a node once measured),
  // then the next frame. Three times, the page reloaded between.
  const renders = [];
  for (let i = 0; i < 3; i++) {
    await page.goto(`${url}/?r=${i}#/operations/${encodeURIComponent(op)}`);
    await page.getByText("Current phase").waitFor({ timeout: 30000 });
    renders.push(await page.evaluate(() => new Promise((resolve) => {
      const tab = [...document.querySelectorAll('[role="tab"]')].find((b) => b.textContent === "Advanced");
      const t0 = performance.now();
      tab.click();
      const check = () => {
        const nodes = document.querySelectorAll(".react-flow__node");
        const hidden = [...nodes].some((n) => n.style.visibility === "hidden");
        if (nodes.length >= 500 && !hidden) requestAnimationFrame(() => resolve(performance.now() - t0));
        else requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    })));
  }
  figures.dag500_first_render_ms = round(Math.min(...renders));
  figures.dag500_first_render_max_ms = round(Math.max(...renders));
  console.log(`500-node DAG first render: ${renders.map(round).join(", ")} ms`);

  // 2. Event to screen: approve the gate; 500 nodes run, each status
  // event is matched with the frame that showed it.
  // Frame times meanwhile: the floor under the latencies (the server runs
  // the 500 jobs on the same two cores).
  await page.evaluate(() => {
    window.__received = []; window.__painted = []; window.__frames = []; window.__framing = true;
    let last = performance.now();
    const tick = (now) => { window.__frames.push(now - last); last = now; if (window.__framing) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
  await gql(sreToken, `mutation($op: ID!) { decideGate(input: {operation: $op, node: "hold", approve: true}) { status } }`, { op });
  await page.locator("#operation-title .status-succeeded").waitFor({ timeout: 300000 });
  await page.waitForTimeout(500);
  const { received, painted, opFrames } = await page.evaluate(() => { window.__framing = false; return { received: window.__received, painted: window.__painted, opFrames: window.__frames }; });
  figures.operation_frame_p50_ms = round(quantile(opFrames, 0.5));
  figures.operation_frame_p95_ms = round(quantile(opFrames, 0.95));
  figures.operation_frame_max_ms = round(Math.max(...opFrames));
  const latencies = [];
  const byKey = new Map();
  for (const p of painted) {
    const k = `${p.node}/${p.status}`;
    if (!byKey.has(k)) byKey.set(k, p);
  }
  for (const r of received) {
    const p = byKey.get(`${r.node}/${r.status}`);
    if (p && p.frame >= r.t) latencies.push(p.frame - r.t);
  }
  figures.event_to_screen_events = latencies.length;
  figures.event_to_screen_p50_ms = round(quantile(latencies, 0.5));
  figures.event_to_screen_p95_ms = round(quantile(latencies, 0.95));
  figures.event_to_screen_max_ms = round(Math.max(...latencies));
  console.log(`event to screen over ${latencies.length} of ${received.length} status events: p50 ${figures.event_to_screen_p50_ms} ms, p95 ${figures.event_to_screen_p95_ms} ms, max ${figures.event_to_screen_max_ms} ms; the page's frames meanwhile: p50 ${figures.operation_frame_p50_ms}, p95 ${figures.operation_frame_p95_ms}, max ${figures.operation_frame_max_ms} ms`);

  // 3. The dashboard with a thousand operations waiting at their gates,
  // measured over ten seconds while people approve them (each then runs
  // and succeeds): frame times, and the live updates that arrived.
  await ask("START-OPERATIONS");
  await page.goto(url + "/#/operations");
  // The small ones and the few started before them (the 500-node one).
  const listed = Array.from({ length: 10 }, (_, i) => operations + i).join("|");
  await page.getByText(new RegExp(`^(${listed}) operations$`)).waitFor({ timeout: 120000 });
  await ask("APPROVE-GATES");
  const frames = await page.evaluate((windowMs) => new Promise((resolve) => {
    window.__liveOps = 0;
    const deltas = [];
    let last = performance.now();
    const until = last + windowMs;
    const scroller = document.querySelector(".rows");
    let step = 0;
    const tick = (now) => {
      deltas.push(now - last);
      last = now;
      // Scroll as a reader would, so rows come and go meanwhile.
      if (scroller && ++step % 30 === 0) scroller.scrollTop = (scroller.scrollTop + 700) % scroller.scrollHeight;
      if (now < until) requestAnimationFrame(tick);
      else resolve({ deltas, live: window.__liveOps });
    };
    requestAnimationFrame(tick);
  }), windowMs);
  const counts = {};
  for (const s of ["PENDING", "RUNNING", "SUCCEEDED", "FAILED", "WAITING"]) {
    counts[s] = (await gql(token, `query($s: OperationStatus) { operations(filter: {status: $s}) { totalCount } }`, { s })).operations.totalCount;
  }
  console.log("operations by status after the measurement: " + JSON.stringify(counts));
  const sample = await gql(token, `{ operations(filter: {status: RUNNING}, first: 3) { edges { node { createdAt nodeRuns { node status } timeline(first: 20) { edges { node { type at } } } } } } }`);
  console.log("sample: " + JSON.stringify(sample).slice(0, 1500));
  console.log("dashboard notes: " + JSON.stringify(await page.locator("[role=status]").allTextContents()));
  figures.dashboard_frames = frames.deltas.length;
  figures.dashboard_live_updates = frames.live;
  figures.dashboard_frame_p50_ms = round(quantile(frames.deltas, 0.5));
  figures.dashboard_frame_p95_ms = round(quantile(frames.deltas, 0.95));
  figures.dashboard_frame_max_ms = round(Math.max(...frames.deltas));
  console.log(`dashboard, ${operations} operations, ${frames.live} live updates in ${windowMs / 1000} s: frames p50 ${figures.dashboard_frame_p50_ms} ms, p95 ${figures.dashboard_frame_p95_ms} ms, max ${figures.dashboard_frame_max_ms} ms`);
  console.log("FIGURES " + JSON.stringify(figures));
} finally {
  await browser.close();
}
process.exit(0);
