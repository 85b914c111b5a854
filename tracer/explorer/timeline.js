// tracer/explorer/timeline.js: the profiler's events on one time axis, nested events one row lower;
// an op's event is matched to its call in order of name, as both saw the ops in the order they ran.
"use strict";
X.timeline = function (root, rank, ri) {
  const ev = rank.timeline;
  if (!ev.length) { root.innerHTML = '<p class="muted">No profile was recorded.</p>'; return; }
  const depth = ev.map(() => 0);
  ev.forEach((e, i) => { depth[i] = e.parent >= 0 && e.parent < i ? depth[e.parent] + 1 : 0; });
  const callOf = new Map(), eventOf = new Map(), queue = new Map();
  rank.calls.forEach((c, i) => {
    if (c.kind !== "op") return;
    const k = X.short(c.name);
    if (!queue.has(k)) queue.set(k, []);
    queue.get(k).push(i);
  });
  const order = ev.map((e, i) => i).sort((a, b) => ev[a].start - ev[b].start);
  for (const i of order) {
    const q = queue.get(ev[i].name);
    if (q && q.length) { const c = q.shift(); callOf.set(i, c); eventOf.set(c, i); }
  }
  const end = Math.max(...ev.map((e) => e.start + e.dur)), W = Math.max(900, Math.min(6000, ev.length * 4)), RH = 14;
  const rows = Math.max(...depth) + 1, sx = W / Math.max(end, 1e-9);
  let s = "";
  ev.forEach((e, i) => {
    const w = Math.max(0.5, e.dur * sx);
    s += `<rect class="ev ev-${X.esc(e.kind)}" data-ev="${i}" x="${(e.start * sx).toFixed(1)}" y="${depth[i] * RH}" ` +
      `width="${w.toFixed(1)}" height="${RH - 2}"><title>${X.esc(e.name)} ${e.dur.toFixed(1)} us</title></rect>`;
  });
  root.innerHTML = `<div class="muted">${end.toFixed(0)} us in all (recording included)</div>` +
    `<svg width="${W}" height="${rows * RH}">${s}</svg>`;
  root.addEventListener("click", (e) => {
    const r = e.target.closest("rect.ev");
    if (r && callOf.has(Number(r.dataset.ev))) X.selectCall(ri, callOf.get(Number(r.dataset.ev)));
  });
  X.on((sel) => {
    const old = root.querySelector("rect.sel");
    if (old) old.classList.remove("sel");
    if (sel.rank === ri && eventOf.has(sel.call)) root.querySelector(`rect[data-ev="${eventOf.get(sel.call)}"]`).classList.add("sel");
  });
};
