// tracer/explorer/main.js: builds every view when the page loads (nothing is generated later), and
// marks the page done for whoever waits on it (the browser test reads document.body.dataset.ready).
"use strict";
X.bigGraph = 1500;  // nodes above which the graph's section starts closed
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
  d.ranks.forEach((r, ri) => {
    const suffix = d.ranks.length > 1 ? ` (rank ${r.rank})` : "";
    timed("tree", () => X.tree(X.section(`tree${ri ? "-" + ri : ""}`, "call tree" + suffix), r, ri));
    if (ri === 0) X.path(X.section("path", "dispatch path"));
  });
  if (d.ranks.length > 1) X.lanes(X.section("lanes", "ranks: ops in order, collectives lined up", true));
  d.ranks.forEach((r, ri) => {
    const suffix = d.ranks.length > 1 ? ` (rank ${r.rank})` : "";
    const big = r.nodes.length > X.bigGraph;
    const title = `autograd graph${suffix}${big ? `: ${r.nodes.length} nodes, drawn when opened` : ""}`;
    timed("graph", () => X.graph(X.section(`graph${ri ? "-" + ri : ""}`, title, false, big), r, ri));
    timed("charts", () => X.charts(X.section(`charts${ri ? "-" + ri : ""}`, "ops and FLOPs per phase" + suffix), r, ri));
    timed("timeline", () => X.timeline(X.section(`timeline${ri ? "-" + ri : ""}`, "profiler timeline" + suffix, true), r, ri));
  });
  document.body.dataset.buildMs = (performance.now() - t0).toFixed(1);
  timings.script_start = X.started;
  timings.json_parse = X.parsed - X.started;
  document.body.dataset.timings = JSON.stringify(timings, (k, v) => (typeof v === "number" ? Math.round(v) : v));
  document.body.dataset.ready = "1";
})();
