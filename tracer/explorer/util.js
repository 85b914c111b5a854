// tracer/explorer/util.js: what every view shares: escaping, tensor ids, and the selection (an op, a
// node) that each view follows. Every view is built in full when the page loads (its data is read by
// data.js).
"use strict";
const X = {};
X.started = performance.now();
X.esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
// "t$4: f32[8, 32]" with each tensor id a span the highlighter can find.
X.tids = (s) => X.esc(s).replace(/\b([a-z]*t)\$(\d+)/g, (m, p, id) => `<span class="tid" data-tid="${id}">${p}$${id}</span>`);
X.idsIn = (s) => Array.from(String(s).matchAll(/\b[a-z]*t\$(\d+)/g), (m) => m[1]);
X.listeners = [];
X.on = (fn) => X.listeners.push(fn);
X.select = (sel) => {
  X.completeTree();
  X.current = sel;
  for (const fn of X.listeners) fn(sel);
};
// Highlighting a tensor everywhere is one style rule, whatever the page's size.
X.hlStyle = document.createElement("style");
document.head.appendChild(X.hlStyle);
X.highlight = (ids, color) => {
  X.completeTree();
  for (const up of X.upgraders || []) up(ids);
  X.hlStyle.textContent = ids.length ? ids.map((i) => `[data-tid="${i}"]`).join(",") + `{background:${color || "#ffd98a"};}` : "";
};
document.addEventListener("mouseover", (e) => {
  const t = e.target.closest ? e.target.closest("[data-tid]") : null;
  if (t) X.highlight([t.dataset.tid], "#9fe0b8");
  else if (X.current && X.current.ids) X.highlight(X.current.ids);
});
X.el = (tag, attrs, html) => {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (html !== undefined) e.innerHTML = html;
  return e;
};
// A view's section, a <details> that starts open unless `closed`: a closed one's content is in the
// page but not laid out until it is opened (a long step's graph).
X.section = (id, title, wide, closed) => {
  const s = X.el("section", { class: wide ? "wide" : "" });
  const d = X.el("details", closed ? {} : { open: "" }, `<summary><h2>${X.esc(title)}</h2></summary>`);
  const body = X.el("div", { id });
  d.appendChild(body);
  s.appendChild(d);
  X.main.appendChild(s);
  return body;
};
X.short = (name) => String(name).replace(/\.[A-Za-z_]+$/, "");  // "aten::add_.Tensor" -> "aten::add_"
