// tracer/explorer/main.js: builds the page when it loads.
//
// Note [The explorer's first paint]
// A step of 10,000 ops has 15,000 tree rows, and the page must paint within a second while every op
// and node name is in it once it has loaded, as real rows (hidden when folded), never made on demand.
// This script, the page's first, builds from the data's columns (data.js) the header, the list of
// every autograd node's name (hidden: the graph shows them) and the tree's first X.firstRows rows; the
// page's second script, a separate element after it, draws the tree's other rows (X.completeTree).
// Between the two the HTML parser yields, so the browser paints the first screen before the rest is
// built (were it not to yield, the rows would come before the paint, as all of them once did), and
// the parser finishes, so the page loads, only after the second. The graph, lanes, charts and
// timeline are drawn in a task queued from the first frame's callback (a graph above X.bigGraph
// nodes when its section is first opened); that task first completes the tree, in case it runs
// before the second script. The page then marks itself done for whoever waits on it (the browser
// test reads document.body.dataset.ready).
"use strict";
X.bigGraph = 1500;  // nodes above which the graph's section starts closed and is drawn when opened
(function () {
  const d = X.data, t0 = performance.now(), timings = {};
  const timed = (name, fn) => { const t = performance.now(); fn(); timings[name] = (timings[name] || 0) + performance.now() - t; };
  const header = X.el("header", {}, `<h1>${X.esc(d.title)}</h1>`);
  document.body.appendChild(header);
  X.main = X.el("main");
  document.body.appendChild(X.main);
  const rank0 = d.ranks[0];
  const opKind = d.strings.indexOf("op");
  const ops = d.ranks.reduce((s, r) => s + r.packed.calls.kind.filter((k) => k === opKind).length, 0);
  const nodeCount = (r) => r.packed.nodes.name.length;
  header.appendChild(X.el("span", { class: "summary" }, `${d.ranks.length} rank${d.ranks.length > 1 ? "s" : ""}, ` +
    `${ops} ops, ${nodeCount(rank0)} autograd nodes. Select an op; hover a tensor id (t$N) to find it everywhere.`));
  const multi = d.ranks.length > 1, later = [];
  const suffix = (r) => (multi ? ` (rank ${r.rank})` : "");
  const id = (name, ri) => name + (ri ? "-" + ri : "");
  d.ranks.forEach((r, ri) => {
    timed("tree", () => X.tree(X.section(id("tree", ri), "call tree" + suffix(r)), r, ri));
    if (ri === 0) X.path(X.section("path", "dispatch path"));
  });
  if (multi) {
    const lanes = X.section("lanes", "ranks: ops in order, collectives lined up", true);
    later.push(() => timed("lanes", () => X.lanes(lanes)));
  }
  d.ranks.forEach((r, ri) => {
    const big = nodeCount(r) > X.bigGraph;
    const title = `autograd graph${suffix(r)}${big ? `: ${nodeCount(r)} nodes, drawn when opened` : ""}`;
    const graph = X.section(id("graph", ri), title, false, big);
    // Every node's name, in the page before the graph is drawn (hidden: the graph shows them).
    graph.insertAdjacentHTML("beforebegin", `<ol class="node-names" data-rank="${ri}" hidden>` +
      r.packed.nodes.name.map((n, i) => `<li data-node="${i}">${X.e(n)}</li>`).join("") + "</ol>");
    const draw = () => timed("graph", () => X.graph(graph, r, ri));
    if (big) graph.parentElement.addEventListener("toggle", draw, { once: true });
    else later.push(draw);
    const charts = X.section(id("charts", ri), "ops and FLOPs per phase" + suffix(r));
    later.push(() => timed("charts", () => X.charts(charts, r, ri)));
    const timeline = X.section(id("timeline", ri), "profiler timeline" + suffix(r), true);
    later.push(() => timed("timeline", () => X.timeline(timeline, r, ri)));
  });
  timings.first_views = performance.now() - t0;
  const finish = () => {
    X.completeTree();  // done already, unless this task ran before the page's second script
    for (const fn of later) fn();
    document.body.dataset.buildMs = (performance.now() - t0).toFixed(1);
    timings.script_start = X.started;
    timings.json_parse = X.parsed - X.started;
    timings.rows_done = X.rowsDone;
    document.body.dataset.timings = JSON.stringify(timings, (k, v) => (typeof v === "number" ? Math.round(v) : v));
    document.body.dataset.ready = "1";
  };
  // A task queued from a frame callback runs after that frame is painted.
  requestAnimationFrame(() => { timings.first_frame = performance.now(); setTimeout(finish, 0); });
})();
