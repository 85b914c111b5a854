// tracer/explorer/data.js: the page's data (Note [The page's compact data], tracer/explorer_data.h):
// strings by index into one table, each table in columns. Note [The explorer's first paint]: the
// tree and the list of node names are drawn from the columns (X.e: a string escaped once, however
// many rows show it); a rank's calls, nodes, dispatch steps and profiler events become the records'
// objects when something first asks for them. Mirrors decode_page_data in explorer_data.cpp.
"use strict";
X.decode = (raw) => {
  const S = raw.strings;
  const calls = (t, u) => {
    const n = t.kind.length, out = new Array(n);
    for (let i = 0; i < n; i++) {
      const c = { kind: S[t.kind[i]], name: S[t.name[i]], parent: t.up[i] ? i - t.up[i] : null, depth: t.depth[i],
        args: t.args[i].map((a) => S[a]), phase: t.phase[i] };
      if (t.output[i] >= 0) c.output = S[t.output[i]];
      if (t.step[i] >= 0) c.step = t.step[i];
      if (t.flops[i] >= 0) c.flops = t.flops[i];
      if (t.ran_by[i] >= 0) c.ran_by = t.ran_by[i];
      out[i] = c;
    }
    for (const [i, kv] of t.kwargs) out[i].kwargs = kv.map(([k, v]) => [S[k], S[v]]);
    for (const i of t.unrecorded) out[i].unrecorded = true;
    u.forward.forEach((c, i) => { if (c >= 0) out[c].node = i; });
    return out;
  };
  const nodes = (u) => {
    const out = u.name.map((name, i) => {
      const d = { name: S[name], seq: u.seq[i], next: u.next[i], saved: u.saved[i].map(([k, sizes]) => [S[k], sizes]) };
      if (u.forward[i] >= 0) d.forward = u.forward[i];
      if (u.ran[i] >= 0) d.ran = u.ran[i];
      return d;
    });
    for (const [i, dtype, sizes] of u.leaf) out[i].leaf = [S[dtype], sizes];
    return out;
  };
  const rank = (r) => {
    const out = { rank: r.rank, phases: r.phases, arg_names: r.arg_names, engine_nodes: r.engine_nodes, packed: r };
    let c, n;
    Object.defineProperty(out, "calls", { enumerable: true, get: () => c || (c = calls(r.calls, r.nodes)) });
    Object.defineProperty(out, "nodes", { enumerable: true, get: () => n || (n = nodes(r.nodes)) });
    return out;
  };
  return { title: raw.title, strings: S, ranks: raw.ranks.map(rank) };
};
// A rank's dispatch steps: { op, args, keys, key, handler, parent, notes }.
X.steps = (rank) => {
  if (!rank.steps) {
    const S = X.data.strings, t = rank.packed.steps;
    const kinds = t.kinds.map((k) => ({ op: S[k[0]], args: S[k[1]], keys: S[k[2]], key: S[k[3]], handler: S[k[4]],
      notes: k[5].length ? k[5].map((i) => S[i]) : undefined }));
    rank.steps = t.kind.map((k, i) => Object.assign({ parent: t.up[i] ? i - t.up[i] : null }, kinds[k]));
  }
  return rank.steps;
};
// A rank's profiler events: { name, kind, start, dur, parent } (times in us).
X.events = (rank) => {
  const S = X.data.strings, t = rank.packed.timeline;
  let at = 0;
  return t.name.map((name, i) => {
    at += t.start_ns[i];
    return { name: S[name], kind: S[t.category[i]], start: at / 1000, dur: t.dur_ns[i] / 1000, parent: t.up[i] ? i - t.up[i] : -1 };
  });
};
X.data = X.decode(JSON.parse(document.getElementById("explorer-data").textContent));
X.escaped = [];
X.e = (i) => X.escaped[i] ?? (X.escaped[i] = X.esc(X.data.strings[i]));  // string i, escaped
X.parsed = performance.now();
