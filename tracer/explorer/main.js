// tracer/explorer/main.js: builds every view when the page loads (nothing is generated later), and
// marks the page done for whoever waits on it (the browser test reads document.body.dataset.ready).
"use strict";
(function () {
  const d = X.data, t0 = performance.now();
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
    X.tree(X.section(`tree${ri ? "-" + ri : ""}`, "call tree" + suffix), r, ri);
    if (ri === 0) X.path(X.section("path", "dispatch path"));
  });
  if (d.ranks.length > 1) X.lanes(X.section("lanes", "ranks: ops in order, collectives lined up", true));
  d.ranks.forEach((r, ri) => {
    const suffix = d.ranks.length > 1 ? ` (rank ${r.rank})` : "";
    X.graph(X.section(`graph${ri ? "-" + ri : ""}`, "autograd graph" + suffix), r, ri);
    X.charts(X.section(`charts${ri ? "-" + ri : ""}`, "ops and FLOPs per phase" + suffix), r, ri);
    X.timeline(X.section(`timeline${ri ? "-" + ri : ""}`, "profiler timeline" + suffix, true), r, ri);
  });
  document.body.dataset.buildMs = (performance.now() - t0).toFixed(1);
  document.body.dataset.ready = "1";
})();
