// tracer/explorer/graph.js: the autograd graph as SVG, laid out here: layers by longest path from the
// nodes nothing points to (the loss's grad_fn first), each layer ordered by the mean position of the
// nodes pointing at it, edges from a node to the nodes its gradients flow to (AccumulateGrad last).
"use strict";
X.layout = (nodes) => {
  const n = nodes.length, indeg = new Array(n).fill(0), layer = new Array(n).fill(0);
  nodes.forEach((d) => d.next.forEach((t) => indeg[t]++));
  const queue = [];
  for (let i = 0; i < n; i++) if (!indeg[i]) queue.push(i);
  for (let q = 0; q < queue.length; q++) {  // Kahn's order: a node's layer is after all its sources'
    const i = queue[q];
    for (const t of nodes[i].next) {
      layer[t] = Math.max(layer[t], layer[i] + 1);
      if (--indeg[t] === 0) queue.push(t);
    }
  }
  const layers = [];
  const pos = new Array(n).fill(0), preds = nodes.map(() => []);
  nodes.forEach((d, i) => d.next.forEach((t) => preds[t].push(i)));
  for (const i of queue) (layers[layer[i]] = layers[layer[i]] || []).push(i);
  for (const L of layers) {
    if (!L) continue;
    const key = (i) => preds[i].length ? preds[i].reduce((s, p) => s + pos[p], 0) / preds[i].length : pos[i];
    L.sort((a, b) => key(a) - key(b));
    L.forEach((i, k) => { pos[i] = k; });
  }
  return { layer, pos, layers: layers.filter(Boolean), placed: queue.length };
};
X.graph = function (root, rank, ri) {
  const nodes = rank.nodes;
  if (!nodes.length) { root.innerHTML = '<p class="muted">No autograd graph was recorded.</p>'; return; }
  const { layer, pos, layers } = X.layout(nodes);
  const W = 150, H = 24, GX = 16, GY = 34;
  const wmax = Math.max(...layers.map((L) => L.length));
  const width = wmax * (W + GX) + GX, height = layers.length * (H + GY) + GY;
  const xy = (i) => [GX + pos[i] * (W + GX) + (wmax - layers[layer[i]].length) * (W + GX) / 2, GY / 2 + layer[i] * (H + GY)];
  let edges = "", boxes = "";
  nodes.forEach((d, i) => {
    const [x, y] = xy(i);
    for (const t of d.next) {
      const [tx, ty] = xy(t);
      edges += `<path d="M${x + W / 2},${y + H} C${x + W / 2},${y + H + GY / 2} ${tx + W / 2},${ty - GY / 2} ${tx + W / 2},${ty}"></path>` +
        `<path class="head" d="M${tx + W / 2 - 4},${ty - 6} L${tx + W / 2},${ty} L${tx + W / 2 + 4},${ty - 6}"></path>`;
    }
    const cls = "node" + (d.name === "AccumulateGrad" ? " acc" : "") + (d.ran === undefined ? " notrun" : "");
    const saved = d.saved.map(([nm, s]) => `${nm} [${s.join(", ")}]`).join("; ");
    boxes += `<g class="${cls}" data-node="${i}" transform="translate(${x},${y})"><title>${X.esc(d.name)}` +
      `${saved ? " saved: " + X.esc(saved) : ""}${d.ran !== undefined ? " (ran " + (d.ran + 1) + "th)" : ""}</title>` +
      `<rect width="${W}" height="${H}"></rect><text x="6" y="16">${X.esc(d.name.slice(0, 20))}</text></g>`;
  });
  root.innerHTML = `<svg width="${width}" height="${height}">` + edges + boxes + "</svg>";
  root.addEventListener("click", (e) => {
    const g = e.target.closest("g.node");
    if (g) X.selectNode(ri, Number(g.dataset.node));
  });
  X.on((sel) => {
    const old = root.querySelector("g.node.sel");
    if (old) old.classList.remove("sel");
    if (sel.rank !== ri) return;
    const ni = sel.node !== undefined ? sel.node : sel.call !== undefined ? rank.calls[sel.call].ran_by : undefined;
    if (ni === undefined) return;
    const g = root.querySelector(`g.node[data-node="${ni}"]`);
    g.classList.add("sel");
  });
};
