// tracer/explorer/main.js: builds the page when it loads. Note [The explorer's first paint]: the
// header, the call tree (every row) and the list of every autograd node's name are built at once;
// the graph, lanes, charts and timeline are drawn just after the first frame is painted (a graph
// above X.bigGraph nodes when its section is first opened), so that a step of 10,000 ops paints its
// tree in well under a second while every op and node name is in the page from the start. The page
// marks itself done for whoever waits on it (the browser test reads document.body.dataset.ready).
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
  const ops = d.ranks.reduce((s, r) => s + r.calls.filter((c) => c.kind === "op").length, 0);
  header.appendChild(X.el("span", { class: "summary" }, `${d.ranks.length} rank${d.ranks.length > 1 ? "s" : ""}, ` +
    `${ops} ops, ${rank0.nodes.length} autograd nodes. Select an op; hover a tensor id (t$N) to find it everywhere.`));
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
    const big = r.nodes.length > X.bigGraph;
    const title = `autograd graph${suffix(r)}${big ? `: ${r.nodes.length} nodes, drawn when opened` : ""}`;
    const graph = X.section(id("graph", ri), title, false, big);
    // Every node's name, in the page before the graph is drawn (hidden: the graph shows them).
    graph.insertAdjacentHTML("beforebegin", `<ol class="node-names" data-rank="${ri}" hidden>` +
      r.nodes.map((n, i) => `<li data-node="${i}">${X.esc(n.name)}</li>`).join("") + "</ol>");
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
    for (const fn of later) fn();
    document.body.dataset.buildMs = (performance.now() - t0).toFixed(1);
    timings.script_start = X.started;
    timings.json_parse = X.parsed - X.started;
    document.body.dataset.timings = JSON.stringify(timings, (k, v) => (typeof v === "number" ? Math.round(v) : v));
    document.body.dataset.ready = "1";
  };
  // A task queued from a frame callback runs after that frame is painted.
  requestAnimationFrame(() => { timings.first_frame = performance.now(); setTimeout(finish, 0); });
})();
