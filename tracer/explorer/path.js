// tracer/explorer/path.js: the selected op's journey: each dispatch key it passed and what happened
// there (the trace's steps and notes), the node autograd recorded, what that node saved, and the
// backward ops the node later ran (or, for a backward op, the node that ran it).
"use strict";
X.stepKids = (rank) => {
  if (!rank._kids) {
    X.steps(rank);
    rank._kids = rank.steps.map(() => []);
    rank.steps.forEach((s, i) => { if (s.parent !== null) rank._kids[s.parent].push(i); });
    rank._ranNodes = rank.nodes.map(() => []);
    rank.calls.forEach((c, i) => { if (c.ran_by !== undefined) rank._ranNodes[c.ran_by].push(i); });
  }
  return rank._kids;
};
// The steps of one call of the op: from the first key it took down through its redispatches.
X.chain = (rank, s) => {
  const kids = X.stepKids(rank), steps = rank.steps;
  let top = s;
  while (steps[top].parent !== null && steps[steps[top].parent].op === steps[s].op) top = steps[top].parent;
  const chain = [top];
  for (let cur = top; ;) {
    const next = kids[cur].find((k) => steps[k].op === steps[s].op);
    if (next === undefined) break;
    chain.push(next);
    cur = next;
  }
  return { top, chain };
};
X.callLink = (ri, i) => {
  const c = X.data.ranks[ri].calls[i];
  return `<a class="link" data-goto="${i}">${X.esc(c.name)}</a><span class="muted"> #${i}</span>`;
};
X.nodeLink = (ni, rank) => `<a class="link" data-node="${ni}">${X.esc(rank.nodes[ni].name)}</a><span class="muted"> n${ni}</span>`;
X.path = function (root) {
  root.innerHTML = '<p class="muted">Select an op in the tree, the graph or the timeline.</p>';
  root.addEventListener("click", (e) => {
    const a = e.target.closest("a.link");
    if (!a || !X.current) return;
    if (a.dataset.goto !== undefined) X.selectCall(X.current.rank, Number(a.dataset.goto));
    else X.selectNode(X.current.rank, Number(a.dataset.node));
  });
  X.on((sel) => {
    const rank = X.data.ranks[sel.rank];
    X.stepKids(rank);
    let h = "";
    if (sel.call !== undefined) {
      const c = rank.calls[sel.call];
      h += `<h3>${X.esc(c.name)}(${(c.args || []).map(X.tids).join(", ")})</h3>`;
      if (c.output) h += `<div>returns ${X.tids(c.output)}</div>`;
      h += `<div class="muted">phase ${X.esc(rank.phases[c.phase])}${c.flops ? `, ${c.flops} FLOPs` : ""}` +
        `${c.unrecorded ? ", seen by DebugMode but not recorded (from its trace step)" : ""}</div>`;
      if (c.step !== undefined) {
        const { top, chain } = X.chain(rank, c.step);
        const keys = chain.map((s) => rank.steps[s].key);
        h += `<div id="path-keys"><b>path:</b> ${keys.map((k) => `<span class="key key-${X.esc(k)}">${X.esc(k)}</span>`).join(" &rarr; ")}</div><ol>`;
        for (const s of chain) {
          const st = rank.steps[s];
          h += `<li><span class="key key-${X.esc(st.key)}">${X.esc(st.key)}</span> ${X.esc(st.handler)} ` +
            `<span class="muted">keys ${X.esc(st.keys)}</span>` +
            (st.notes || []).map((n) => `<div class="note">${X.esc(n)}</div>`).join("") + "</li>";
        }
        h += "</ol>";
        const up = rank.steps[top].parent;
        if (up !== null) h += `<div class="muted">called inside ${X.esc(rank.steps[up].op)} at ${X.esc(rank.steps[up].key)}` +
          `${(rank.steps[up].notes || []).map((n) => ` (${X.esc(n)})`).join("")}</div>`;
      } else if (c.kind === "op") {
        h += '<div class="muted">no trace step (handled by a subclass DebugMode records)</div>';
      }
      if (c.node !== undefined) h += X.nodeFacts(sel.rank, c.node, c);
      if (c.ran_by !== undefined) h += `<div>run in the backward by ${X.nodeLink(c.ran_by, rank)}` +
        (rank.nodes[c.ran_by].forward !== undefined ? `, which ${X.callLink(sel.rank, rank.nodes[c.ran_by].forward)} recorded` : "") + "</div>";
    } else if (sel.node !== undefined) {
      h += X.nodeFacts(sel.rank, sel.node);
    }
    root.innerHTML = h;
  });
};
X.nodeFacts = (ri, ni, call) => {
  const rank = X.data.ranks[ri], n = rank.nodes[ni];
  const names = call ? rank.arg_names[call.name] || [] : [];
  let h = `<div id="path-node">autograd node: ${X.nodeLink(ni, rank)}` +
    (n.ran !== undefined ? ` <span class="muted">(ran ${n.ran + 1}th in the backward)</span>` : ' <span class="muted">(not run)</span>') + "</div>";
  if (n.forward !== undefined && !call) h += `<div>recorded by ${X.callLink(ri, n.forward)}</div>`;
  if (n.leaf) h += `<div>accumulates into a leaf ${X.esc(n.leaf[0])}[${n.leaf[1].join(", ")}]</div>`;
  if (n.saved.length) {
    h += "<div>saved for backward: " + n.saved.map(([name, sizes]) => {
      const i = names.indexOf(name);
      const src = call ? (i >= 0 ? call.args[i] : name.startsWith("result") ? call.output : null) : null;
      const id = src ? X.idsIn(src)[0] : undefined;
      return `${X.esc(name)} [${sizes.join(", ")}]` + (id !== undefined ? ` = <span class="tid" data-tid="${id}">t$${id}</span>` : "");
    }).join(", ") + "</div>";
  }
  const ran = rank._ranNodes[ni];
  if (ran.length) h += `<div>backward ops it ran: ${ran.map((i) => X.callLink(ri, i)).join(", ")}</div>`;
  return h;
};
X.selectNode = (ri, ni) => {
  const n = X.data.ranks[ri].nodes[ni];
  if (n.forward !== undefined) X.selectCall(ri, n.forward);
  else X.select({ rank: ri, node: ni, ids: [] });
};
