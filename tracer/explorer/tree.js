// tracer/explorer/tree.js: the call tree (DebugMode's modules, function calls and ops), every row in
// the page by the time it has loaded; collapsing a call hides its rows. One listener for all rows.
// A row's tensor ids are plain text until the row is hovered or selected, or one of its ids is
// highlighted (X.upgraders): a long step's rows then cost the browser a third fewer elements.
"use strict";
X.block = 200;
X.firstRows = 2 * X.block;  // the rows drawn before the first paint: well past the tree's view
X.pendingRows = [];  // each tree's rest of the rows
// Draws every tree's rows not yet drawn: the page's second script calls it, and so does anything
// that needs every row (a selection, a highlight, the page's end of building).
X.completeTree = () => {
  const pending = X.pendingRows;
  X.pendingRows = [];
  for (const fn of pending) fn();
  if (pending.length) X.rowsDone = performance.now();
};
X.upgraders = [];  // each tree's: gives the rows holding these tensor ids their id spans
X.depths = new Set();
// A rule .dN (a row's indent) for each depth N not yet styled.
X.depthClasses = (depths) => {
  let css = "";
  for (const d of new Set(depths)) if (!X.depths.has(d)) { X.depths.add(d); css += `.d${d}{padding-left:${d * 14}px}`; }
  if (css) document.head.appendChild(X.el("style", {}, css));
};
X.tree = function (root, rank, ri) {
  const t = rank.packed.calls, n = t.kind.length, E = X.e;
  const hasKids = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (t.up[i]) hasKids[i - t.up[i]] = 1;
  let kidLists;  // each call's children, made when a row is first folded or selected
  const kids = (i) => {
    if (!kidLists) {
      kidLists = Array.from({ length: n }, () => []);
      for (let k = 0; k < n; k++) if (t.up[k]) kidLists[k - t.up[k]].push(k);
    }
    return kidLists[i];
  };
  // A row's content once upgraded; `ids` formats an argument (X.tids: with the id spans).
  const inner = (i, ids, closed) => {
    const c = rank.calls[i];
    const args = c.args.map(ids).join(", ") + (c.kwargs || []).map((kv) => `, ${X.esc(kv[0])}=${ids(kv[1])}`).join("");
    const out = c.output ? ` <span class="out">&rarr; ${ids(c.output)}</span>` : "";
    const flops = c.flops ? ` <span class="ph">${c.flops} FLOPs</span>` : "";
    const label = c.kind === "module" ? "[nn.Mod] " : "";
    const tog = hasKids[i] ? `<span class="tog">${closed ? "&#9656;" : "&#9662;"}</span>` : "";
    return `${tog}${label}${X.esc(c.name)}${label ? "" : `(${args})`}${out}${flops}`;
  };
  // The rows as first drawn, straight from the columns (the same content as inner(i, X.esc)).
  const kwargs = new Map(t.kwargs), unrecorded = new Set(t.unrecorded), phases = rank.phases.map(X.esc);
  const moduleKind = X.data.strings.indexOf("module");
  // Rows go in blocks of X.block, each laid out only when it nears the view (page.css: .blk), so
  // that a long step's first paint styles a screenful of rows, not all of them. The rows from..to.
  const rows = (from, to) => {
    const parts = [];
    for (let i = from; i < to; i++) {
      if (i % X.block === 0) parts.push(i > from ? '</div><div class="blk">' : '<div class="blk">');
      const name = E(t.name[i]), module = t.kind[i] === moduleKind;
      let args = "";
      if (!module) {
        const a = t.args[i];
        for (let k = 0; k < a.length; k++) args += (k ? ", " : "") + E(a[k]);
        for (const [key, v] of kwargs.get(i) || []) args += `, ${E(key)}=${E(v)}`;
      }
      // The kind's badge and the phase are drawn from data-kind and data-phase, the indent from the
      // depth's class (X.depthClasses), and a leaf has no toggle (page.css): a long step's tens of
      // thousands of rows have no inline style to parse and few elements.
      parts.push(`<div class="row d${t.depth[i]}${hasKids[i] ? "" : " lf"}${unrecorded.has(i) ? " un" : ""}" data-call="${i}" ` +
        `data-kind="${E(t.kind[i])}" data-name="${name}" data-phase="${phases[t.phase[i]]}">` +
        `${hasKids[i] ? '<span class="tog">&#9662;</span>' : ""}${module ? "[nn.Mod] " + name : `${name}(${args})`}` +
        (t.output[i] >= 0 ? ` <span class="out">&rarr; ${E(t.output[i])}</span>` : "") +
        (t.flops[i] > 0 ? ` <span class="ph">${t.flops[i]} FLOPs</span>` : "") + "</div>");
    }
    if (to > from) parts.push("</div>");
    return parts.join("");
  };
  X.depthClasses(t.depth);
  // Note [The explorer's first paint]: the first X.firstRows rows now, the others in the page's
  // second script (X.completeTree), before the page has loaded.
  const first = Math.min(n, X.firstRows);
  root.innerHTML = rows(0, first);
  let el = root.querySelectorAll(".row");
  X.pendingRows.push(() => {
    if (first < n) root.insertAdjacentHTML("beforeend", rows(first, n));
    el = root.querySelectorAll(".row");
  });
  const upgrade = (i) => {
    if (el[i].dataset.up) return;
    el[i].innerHTML = inner(i, X.tids, el[i].dataset.closed === "1");
    el[i].dataset.up = "1";
  };
  let byTid;  // tensor id -> the calls that show it, made on the first highlight
  X.upgraders.push((ids) => {
    if (!byTid) {
      byTid = new Map();
      rank.calls.forEach((c, i) => {
        const text = (c.args || []).join(" ") + " " + (c.kwargs || []).map((kv) => kv[1]).join(" ") + " " + (c.output || "");
        for (const id of X.idsIn(text)) (byTid.get(id) || byTid.set(id, []).get(id)).push(i);
      });
    }
    for (const id of ids) for (const i of byTid.get(id) || []) upgrade(i);
  });
  root.addEventListener("mouseover", (e) => {
    const row = e.target.closest(".row");
    if (row) upgrade(Number(row.dataset.call));
  });
  const setHidden = (i, hidden) => {
    for (const k of kids(i)) {
      el[k].classList.toggle("hidden", hidden || el[i].dataset.closed === "1");
      setHidden(k, hidden || el[k].dataset.closed === "1");
    }
  };
  root.addEventListener("click", (e) => {
    const row = e.target.closest(".row");
    if (!row) return;
    X.completeTree();  // a fold reaches rows the second script draws
    const i = Number(row.dataset.call);
    if (e.target.classList.contains("tog") && hasKids[i]) {
      row.dataset.closed = row.dataset.closed === "1" ? "0" : "1";
      e.target.innerHTML = row.dataset.closed === "1" ? "&#9656;" : "&#9662;";
      setHidden(i, row.dataset.closed === "1");
      return;
    }
    X.selectCall(ri, i);
  });
  X.on((sel) => {
    const old = root.querySelector(".row.sel");
    if (old) old.classList.remove("sel");
    if (sel.rank !== ri || sel.call === undefined) return;
    const row = el[sel.call];
    upgrade(sel.call);
    row.classList.add("sel");
    for (let i = sel.call; t.up[i]; i -= t.up[i]) {
      const p = i - t.up[i];
      if (el[p].dataset.closed === "1") { el[p].dataset.closed = "0"; setHidden(p, false); }
    }
    row.classList.remove("hidden");
    if (!sel.fromTree) row.scrollIntoView({ block: "nearest" });
  });
};
X.selectCall = (ri, i, fromTree) => {
  const c = X.data.ranks[ri].calls[i];
  const ids = X.idsIn((c.args || []).join(" ") + " " + (c.output || ""));
  X.select({ rank: ri, call: i, node: c.node, ids, fromTree });
};
