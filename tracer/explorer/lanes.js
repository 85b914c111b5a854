// tracer/explorer/lanes.js: with several ranks, one lane per rank of its ops in order, the k-th
// collective of every rank at one x, so that the collectives line up across the lanes.
"use strict";
X.isCollective = (name) => /c10d|_functional::|all_reduce|allreduce|broadcast|all_gather|reduce_scatter|wait_tensor/.test(name);
X.lanes = function (root) {
  const ranks = X.data.ranks;
  const ops = ranks.map((r) => r.calls.map((c, i) => i).filter((i) => r.calls[i].kind === "op"));
  const xs = ranks.map(() => []);
  const cursor = ranks.map(() => 0), at = ranks.map(() => 0);
  let x = 0;
  for (;;) {  // advance every lane to its next collective, then place all of them at the furthest x
    let any = false;
    const next = ranks.map((r, ri) => {
      let k = cursor[ri];
      while (k < ops[ri].length && !X.isCollective(r.calls[ops[ri][k]].name)) k++;
      return k;
    });
    let xmax = x;
    ranks.forEach((r, ri) => { xmax = Math.max(xmax, x + (next[ri] - cursor[ri])); });
    ranks.forEach((r, ri) => {
      for (let k = cursor[ri]; k < next[ri]; k++) xs[ri][k] = at[ri]++;
      if (next[ri] < ops[ri].length) { xs[ri][next[ri]] = xmax; at[ri] = xmax + 1; cursor[ri] = next[ri] + 1; any = true; }
      else cursor[ri] = next[ri];
    });
    x = xmax + 1;
    if (!any) break;
  }
  const n = Math.max(1, ...xs.map((a) => Math.max(0, ...a) + 1)), W = Math.max(900, n * 6), sx = W / n, LH = 22;
  let s = "";
  ranks.forEach((r, ri) => {
    s += `<text x="0" y="${ri * LH + 14}">rank ${r.rank}</text>`;
    ops[ri].forEach((ci, k) => {
      const c = r.calls[ci], coll = X.isCollective(c.name);
      s += `<rect class="${coll ? "coll" : "op"}" data-rank="${ri}" data-call="${ci}" x="${(60 + xs[ri][k] * sx).toFixed(1)}" ` +
        `y="${ri * LH + 3}" width="${Math.max(1, sx - 1).toFixed(1)}" height="16"><title>${X.esc(c.name)}</title></rect>`;
    });
  });
  root.innerHTML = `<svg width="${W + 60}" height="${ranks.length * LH}">${s}</svg>`;
  root.addEventListener("click", (e) => {
    const r = e.target.closest("rect");
    if (r) X.selectCall(Number(r.dataset.rank), Number(r.dataset.call));
  });
};
