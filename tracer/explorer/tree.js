// tracer/explorer/tree.js: the call tree (DebugMode's modules, function calls and ops), every row in
// the page from the start; collapsing a call hides its rows. One string, one listener for all rows.
// A row's tensor ids are plain text until the row is hovered or selected, or one of its ids is
// highlighted (X.upgraders): a long step's rows then cost the browser a third fewer elements.
"use strict";
X.block = 200;
X.upgraders = [];  // each tree's: gives the rows holding these tensor ids their id spans
X.tree = function (root, rank, ri) {
  const calls = rank.calls;
  const kids = calls.map(() => []);
  calls.forEach((c, i) => { if (c.parent !== null && c.parent !== undefined) kids[c.parent].push(i); });
  // A row's content; `ids` formats an argument (X.esc: plain text, X.tids: with the id spans).
  const inner = (i, ids, closed) => {
    const c = calls[i];
    const args = (c.args || []).map(ids).join(", ") + (c.kwargs || []).map((kv) => `, ${X.esc(kv[0])}=${ids(kv[1])}`).join("");
    const out = c.output ? ` <span class="out">&rarr; ${ids(c.output)}</span>` : "";
    const flops = c.flops ? ` <span class="ph">${c.flops} FLOPs</span>` : "";
    const label = c.kind === "module" ? "[nn.Mod] " : "";
    const tog = kids[i].length ? (closed ? "&#9656;" : "&#9662;") : "";
    return `<span class="tog">${tog}</span>${label}${X.esc(c.name)}${label ? "" : `(${args})`}${out}${flops}`;
  };
  const rows = calls.map((c, i) => {
    const un = c.unrecorded ? " un" : "";
    // The kind's badge and the phase are drawn from data-kind and data-phase (page.css): fewer
    // elements per row, for a long step's tens of thousands of rows.
    return `<div class="row${un}" data-call="${i}" data-kind="${X.esc(c.kind)}" data-name="${X.esc(c.name)}" ` +
      `data-phase="${X.esc(rank.phases[c.phase])}" style="padding-left:${c.depth * 14}px">${inner(i, X.esc, false)}</div>`;
  });
  // Rows go in blocks of X.block, each laid out only when it nears the view (page.css: .blk), so
  // that a long step's first paint styles a screenful of rows, not all of them.
  let html = "";
  for (let b = 0; b < rows.length; b += X.block) html += `<div class="blk">${rows.slice(b, b + X.block).join("")}</div>`;
  root.innerHTML = html;
  const el = root.querySelectorAll(".row");
  const upgrade = (i) => {
    if (el[i].dataset.up) return;
    el[i].innerHTML = inner(i, X.tids, el[i].dataset.closed === "1");
    el[i].dataset.up = "1";
  };
  let byTid;  // tensor id -> the calls that show it, made on the first highlight
  X.upgraders.push((ids) => {
    if (!byTid) {
      byTid = new Map();
      calls.forEach((c, i) => {
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
    for (const k of kids[i]) {
      el[k].classList.toggle("hidden", hidden || el[i].dataset.closed === "1");
      setHidden(k, hidden || el[k].dataset.closed === "1");
    }
  };
  root.addEventListener("click", (e) => {
    const row = e.target.closest(".row");
    if (!row) return;
    const i = Number(row.dataset.call);
    if (e.target.classList.contains("tog") && kids[i].length) {
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
    for (let p = calls[sel.call].parent; p !== null && p !== undefined; p = calls[p].parent) {
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
