// tracer/explorer/timeline.js: the profiler's events on one time axis, nested events one row lower,
// drawn on a canvas (a long step has tens of thousands of events; the op names are in the tree). An
// op's event is matched to its call in order of name, as both saw the ops in the order they ran.
"use strict";
X.evColors = { cpu_op: "#3d6fd1", user_annotation: "#c27a2c", python_function: "#2f9a6a" };
X.timeline = function (root, rank, ri) {
  const ev = X.events(rank);
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
  let end = 0, rows = 1;
  ev.forEach((e, i) => { end = Math.max(end, e.start + e.dur); rows = Math.max(rows, depth[i] + 1); });
  const W = Math.max(900, Math.min(16000, ev.length * 2)), RH = 14, sx = W / Math.max(end, 1e-9);
  root.innerHTML = `<div class="muted">${ev.length} events, ${end.toFixed(0)} us in all (recording included); ` +
    `click an event to select its op</div><canvas width="${W}" height="${rows * RH}"></canvas><div class="muted" id="tl-info"></div>`;
  const canvas = root.querySelector("canvas"), g = canvas.getContext("2d"), info = root.querySelector("#tl-info");
  const draw = (sel) => {
    g.clearRect(0, 0, canvas.width, canvas.height);
    ev.forEach((e, i) => {
      g.fillStyle = e.name.startsWith("autograd::") ? "#8a5cc2" : X.evColors[e.kind] || "#9aa4bb";
      g.fillRect(e.start * sx, depth[i] * RH, Math.max(0.5, e.dur * sx), RH - 2);
    });
    if (sel !== undefined) {
      g.strokeStyle = "#000";
      g.lineWidth = 2;
      g.strokeRect(ev[sel].start * sx, depth[sel] * RH, Math.max(2, ev[sel].dur * sx), RH - 2);
      info.textContent = `${ev[sel].name}: ${ev[sel].dur.toFixed(1)} us at ${ev[sel].start.toFixed(1)} us`;
    }
  };
  draw();
  canvas.addEventListener("click", (e) => {
    const r = canvas.getBoundingClientRect(), x = (e.clientX - r.left) / sx, row = Math.floor((e.clientY - r.top) / RH);
    let best;
    ev.forEach((v, i) => { if (depth[i] === row && v.start <= x && x <= v.start + Math.max(v.dur, 2 / sx)) best = i; });
    if (best === undefined) return;
    if (callOf.has(best)) X.selectCall(ri, callOf.get(best));
    else draw(best);
  });
  X.on((sel) => draw(sel.rank === ri ? eventOf.get(sel.call) : undefined));
  root.dataset.events = ev.length;
  root.dataset.matched = eventOf.size;
};
