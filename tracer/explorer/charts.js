// tracer/explorer/charts.js: per phase, the ops and FLOPs counted, as bars; clicking a phase's bar
// selects its first op.
"use strict";
X.charts = function (root, rank, ri) {
  const n = rank.phases.map(() => ({ ops: 0, flops: 0, first: undefined }));
  rank.calls.forEach((c, i) => {
    if (c.kind !== "op") return;
    const p = n[c.phase];
    p.ops++;
    p.flops += c.flops || 0;
    if (p.first === undefined) p.first = i;
  });
  const bars = (key, cls, title) => {
    const max = Math.max(1, ...n.map((p) => p[key]));
    return `<div class="muted">${title}</div><div class="bars">` + n.map((p, i) =>
      `<div>${X.esc(rank.phases[i])}</div><div><div class="bar ${cls}" data-phase="${i}" data-value="${p[key]}" ` +
      `style="width:${(100 * p[key]) / max}%"></div></div><div>${p[key].toLocaleString("en")}</div>`).join("") + "</div>";
  };
  const total = n.reduce((s, p) => s + p.ops, 0);
  root.innerHTML = `<div id="op-total" data-total="${total}">${total} ops</div>` +
    bars("ops", "ops", "ops per phase") + bars("flops", "flops", "FLOPs per phase (registered formulas)");
  root.addEventListener("click", (e) => {
    const b = e.target.closest(".bar");
    if (b && n[b.dataset.phase].first !== undefined) X.selectCall(ri, n[b.dataset.phase].first);
  });
};
