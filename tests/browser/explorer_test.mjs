// tests/browser/explorer_test.mjs: the explorer page in a real browser. Debian's chromium, headless,
// driven through the DevTools protocol by puppeteer-core (pinned in package-lock.json; it downloads no
// browser). Loads from file:// the MLP step's page (strata-trace --html), its pages on 2 ranks and on a
// (2, 2) tensor-parallel mesh, a page with hostile names and a page of about 10,000 ops, and checks what a learner sees: the tree's 43 ops with their phases, addmm's
// path Autograd -> Python -> CPU and its node AddmmBackward0, the graph's nodes (as many as the engine
// ran), no console error, no request for anything but the page, no injected script. Prints the long
// page's time to first paint (not asserted: tests never assert timings). Exit 77 (meson's skip) when the
// browser is missing.
//   node explorer_test.mjs --chromium PATH --trace STRATA_TRACE --pages EXPLORER_PAGES --out DIR [--shot PNG]
// --shot PNG: the MLP page with addmm selected, its top 1280 x 560 pixels (docs/explorer-addmm.png).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const opt = {};
for (let i = 2; i < process.argv.length; i += 2) opt[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
if (!opt.chromium || !existsSync(opt.chromium)) {
  console.log(`chromium not found (${opt.chromium}): skipped`);
  process.exit(77);
}
let puppeteer;
try {
  puppeteer = (await import("puppeteer-core")).default;
} catch (e) {
  console.error("puppeteer-core is missing: run `npm ci` in tests/browser (scripts/test does)");
  process.exit(1);
}

let failures = 0;
const check = (ok, what) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures++;
};

const out = path.resolve(opt.out);
const pages = { mlp: path.join(out, "mlp.html"), ranks: path.join(out, "ranks.html"), mesh: path.join(out, "mesh.html"), hostile: path.join(out, "hostile.html"),
  long: path.join(out, "long.html") };
execFileSync(opt.trace, ["--html", pages.mlp], { stdio: "inherit" });
execFileSync(opt.trace, ["--html", pages.ranks, "--world-size", "2"], { stdio: "inherit" });
execFileSync(opt.trace, ["--html", pages.mesh, "--world-size", "4", "--mesh", "2,2"], { stdio: "inherit" });
execFileSync(opt.pages, [out], { stdio: "inherit" });

const browser = await puppeteer.launch({
  executablePath: opt.chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
});

// Opens `file`, refusing every request but the file itself; gives the page and its console errors.
async function open(file, viewport = { width: 1280, height: 900 }) {
  const page = await browser.newPage();
  await page.setViewport(viewport);
  const errors = [], requests = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.setRequestInterception(true);
  const url = pathToFileURL(file).href;
  page.on("request", (r) => {
    if (r.url() === url) return r.continue();
    requests.push(r.url());
    return r.abort();
  });
  // What the page holds when its load event fires (before it reports ready).
  await page.evaluateOnNewDocument(() => window.addEventListener("load", () => {
    window.atLoad = { rows: document.querySelectorAll("#tree .row").length, names: document.querySelectorAll(".node-names li").length };
  }));
  const t0 = Date.now();
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector("body[data-ready='1']", { timeout: 30000 });
  return { page, errors, requests, loadMs: Date.now() - t0 };
}

// JSON with every object's keys in order: equal facts give equal text.
const canonical = (v) => JSON.stringify(v, (k, x) => (x && typeof x === "object" && !Array.isArray(x)
  ? Object.fromEntries(Object.keys(x).sort().map((key) => [key, x[key]])) : x));
// The page's data as its script decoded it (data.js) equals the record explorer_pages wrote beside it.
async function decodedIsRecord(page, file, what) {
  const record = JSON.parse(readFileSync(file, "utf8"));
  const decoded = await page.evaluate(() => {
    const r = X.data.ranks[0];
    return { calls: r.calls, nodes: r.nodes, steps: X.steps(r).map((s) => [s.op, s.args, s.keys, s.key, s.handler, s.parent,
      s.notes]), timeline: X.events(r).map((e) => [e.name, e.kind, e.start, e.dur, e.parent]) };
  });
  const steps = record.steps.map((s) => [...s.slice(0, 6), s[6]]);
  const same = ["calls", "nodes", "timeline"].filter((k) => canonical(decoded[k]) !== canonical(record[k]));
  if (canonical(decoded.steps) !== canonical(steps)) same.push("steps");
  check(same.length === 0 && record.calls.length > 0, `${what}: the page's decoded data is the record (differs: ${same.join(", ")})`);
}

try {
  // The MLP step.
  const { page, errors, requests } = await open(pages.mlp);
  const rank = await page.evaluate(() => {
    const r = X.data.ranks[0];
    return { calls: r.calls, nodes: r.nodes, engine_nodes: r.engine_nodes };
  });
  const ops = await page.$$eval("#tree .row[data-kind='op']", (rows) => rows.map((r) => [r.dataset.name, r.dataset.phase]));
  check(ops.length === 43, `the tree holds the step's 43 ops (${ops.length})`);
  const perPhase = {};
  for (const [, phase] of ops) perPhase[phase] = (perPhase[phase] || 0) + 1;
  check(perPhase.forward === 9 && perPhase.backward === 28 && perPhase.optimizer === 6,
    `ops per phase: forward 9, backward 28, optimizer 6 (${JSON.stringify(perPhase)})`);
  const rowNames = new Set(await page.$$eval("#tree .row", (rows) => rows.map((r) => r.dataset.name)));
  const missing = rank.calls.filter((c) => !rowNames.has(c.name)).map((c) => c.name);
  check(missing.length === 0, `every call's row is in the page after load (missing: ${missing.join(", ")})`);
  const nodeNames = await page.$$eval("#graph g.node title", (ts) => ts.map((t) => t.textContent.split(" ")[0]));
  check(rank.nodes.every((n, i) => nodeNames[i] === n.name) && nodeNames.includes("AccumulateGrad"),
    "every autograd node, AccumulateGrad included, is in the graph");
  check(nodeNames.length === rank.engine_nodes && nodeNames.length === 11,
    `the graph's nodes (${nodeNames.length}) are the nodes the engine ran (${rank.engine_nodes})`);

  // Folding the first module hides its rows, which stay in the page; unfolding shows them again.
  const fold = await page.evaluate(() => {
    const rows = () => Array.from(document.querySelectorAll("#tree .row"));
    const row = document.querySelector("#tree .row[data-kind='module']"), calls = X.data.ranks[0].calls;
    const inside = (i) => { for (let p = calls[i].parent; p !== null; p = calls[p].parent) if (p === Number(row.dataset.call)) return true; return false; };
    row.querySelector(".tog").click();
    const hidden = rows().filter((r) => r.classList.contains("hidden")).map((r) => Number(r.dataset.call));
    row.querySelector(".tog").click();
    return { folded: hidden.length, expected: calls.filter((c, i) => inside(i)).length, exact: hidden.every(inside),
      all: rows().length, after: rows().filter((r) => r.classList.contains("hidden")).length };
  });
  check(fold.folded === fold.expected && fold.folded > 0 && fold.exact && fold.all === rank.calls.length && fold.after === 0,
    `folding the first module hides its ${fold.folded} rows, kept in the page (${fold.all}), unfolding shows them`);
  // A row as first drawn from the columns reads as the row drawn from the call (with id spans).
  const drawnAlike = await page.evaluate(() => {
    const rows = Array.from(document.querySelectorAll("#tree .row")), before = rows.map((r) => r.textContent);
    for (const r of rows) r.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));  // each row redrawn
    return rows.every((r, i) => r.dataset.up === "1" && r.textContent === before[i]);
  });
  check(drawnAlike, "every row drawn from the data's columns reads as it does redrawn from its call");
  await page.click("#tree .row[data-name='aten::addmm']");
  const keys = await page.$eval("#path-keys", (e) => Array.from(e.querySelectorAll(".key"), (k) => k.textContent));
  check(keys.join(" -> ") === "Autograd -> Python -> CPU", `addmm's path: ${keys.join(" -> ")}`);
  const node = await page.$eval("#path-node", (e) => e.textContent);
  check(node.includes("AddmmBackward0"), `addmm's node: ${node}`);
  const pathText = await page.$eval("#path", (e) => e.textContent);
  check(pathText.includes("handed to the dispatch mode DebugMode") && pathText.includes("kernel addmm") &&
    pathText.includes("saved for backward: mat1") && pathText.includes("aten::mm"),
    "the path names the mode, the kernel, what was saved and the backward ops the node ran");
  check(await page.$eval("#graph g.node.sel title", (t) => t.textContent.startsWith("AddmmBackward0")),
    "selecting addmm selects its node in the graph");
  const highlighted = await page.evaluate(() => {
    const t = document.querySelector("#tree .row.sel .tid");
    t.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    const id = t.dataset.tid;
    const all = document.querySelectorAll(`[data-tid="${id}"]`);
    // Tree rows show their ids as plain text until needed (tree.js): every row that shows this id
    // has it as a highlighted span now.
    const rows = Array.from(document.querySelectorAll("#tree .row")).filter((r) => new RegExp(`\\bt\\$${id}\\b`).test(r.textContent));
    const spanRows = new Set(Array.from(document.querySelectorAll(`#tree [data-tid="${id}"]`), (e) => e.closest(".row")));
    return Array.from(all).every((e) => getComputedStyle(e).backgroundColor !== "rgba(0, 0, 0, 0)") && all.length > 1 &&
      rows.length > 1 && spanRows.size === rows.length;
  });
  check(highlighted, "hovering a tensor id highlights it everywhere");
  if (opt.shot) await page.screenshot({ path: opt.shot, clip: { x: 0, y: 0, width: 1280, height: 560 } });
  await page.screenshot({ path: path.join(out, "explorer-mlp.png"), fullPage: true });
  check(errors.length === 0, `no console errors (${errors.join("; ")})`);
  check(requests.length === 0, `the page requested nothing else (${requests.join(", ")})`);

  // Hostile names: shown as text, never run.
  const h = await open(pages.hostile);
  const hostile = await h.page.evaluate(() => ({
    pwned: window.pwned, scripts: document.scripts.length, title: document.title,
    shown: document.body.textContent.includes("</script><script>window.pwned=1</script>"),
  }));
  check(hostile.pwned === undefined && hostile.scripts === 3, "the hostile names ran no script");
  check(hostile.shown && hostile.title.startsWith("</script>"), "the hostile names are shown as text");
  check(h.errors.length === 0 && h.requests.length === 0, `hostile page: no errors, no requests (${h.errors})`);
  await decodedIsRecord(h.page, path.join(out, "hostile.json"), "hostile page");

  // Two ranks: a lane each, the all-reduces at one x.
  const r = await open(pages.ranks);
  const lanes = await r.page.$$eval("#lanes rect.coll", (rs) => rs.map((e) => [e.dataset.rank, e.getAttribute("x")]));
  check(lanes.length === 2 && lanes[0][0] !== lanes[1][0] && lanes[0][1] === lanes[1][1],
    `two ranks' all-reduces line up (${JSON.stringify(lanes)})`);
  check(r.errors.length === 0, `two-rank page: no console errors (${r.errors})`);

  // A (2, 2) mesh, tensor-parallel: four lanes, each rank's functional collectives at the same x's.
  const m = await open(pages.mesh);
  const meshLanes = await m.page.$$eval("#lanes rect.coll", (rs) => {
    const by = {};
    for (const e of rs) (by[e.dataset.rank] = by[e.dataset.rank] || []).push(e.getAttribute("x"));
    return Object.values(by).map((xs) => xs.join(" "));
  });
  check(meshLanes.length === 4 && meshLanes[0].length > 0 && meshLanes.every((xs) => xs === meshLanes[0]),
    `four tensor-parallel ranks' collectives line up (${meshLanes[0]})`);
  check(m.errors.length === 0, `mesh page: no console errors (${m.errors})`);

  // A step of about 10,000 ops: every row there, time to first paint measured.
  const l = await open(pages.long);
  const long = await l.page.evaluate(() => ({
    rows: document.querySelectorAll("#tree .row[data-kind='op']").length,
    nodes: X.data.ranks[0].nodes.length, names: document.querySelectorAll(".node-names li").length,
    calls: X.data.ranks[0].calls.length, atLoad: window.atLoad,
    call: document.querySelectorAll("#tree .row[data-kind='op']")[4999].dataset.call,
    paint: (performance.getEntriesByType("paint").find((e) => e.name === "first-contentful-paint") || {}).startTime,
    build: Number(document.body.dataset.buildMs), timings: document.body.dataset.timings, bytes: document.documentElement.outerHTML.length,
  }));
  const t0 = Date.now();
  // Clicked in the page: puppeteer's click aims at the row's box before the block it scrolls into
  // view is laid out (content-visibility), so it can land on a neighbouring row.
  await l.page.evaluate((c) => document.querySelector(`#tree .row[data-call='${c}']`).click(), long.call);
  await l.page.waitForSelector("#path-keys");
  const clickMs = Date.now() - t0;
  check(long.rows >= 10000, `the long page holds ${long.rows} ops`);
  check(long.atLoad.rows === long.calls && long.atLoad.names === long.nodes,
    `when the long page has loaded it holds every row (${long.atLoad.rows} of ${long.calls}) and node name (${long.atLoad.names})`);
  check(long.nodes > 5000 && long.names === long.nodes, `the long page names its ${long.nodes} nodes before the graph is drawn`);
  check(l.errors.length === 0, `long page: no console errors (${l.errors})`);
  await decodedIsRecord(l.page, path.join(out, "long.json"), "long page");
  console.log(`long page: ${long.rows} ops, first contentful paint ${long.paint?.toFixed(0)} ms, views built in ` +
    `${long.build.toFixed(0)} ms ${long.timings}, load event after ${l.loadMs} ms, a selection ${clickMs} ms`);
} finally {
  await browser.close();
}
process.exit(failures ? 1 : 0);
