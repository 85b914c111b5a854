#!/usr/bin/env python3
"""FlopCounterMode.get_table() as PyTorch 2.8 prints it, for tests/golden/flop_tables_torch.json.

Debian's PyTorch 1.13 has no torch.utils.flop_counter, so this script rebuilds get_table()'s rules
(torch/utils/flop_counter.py in 2.8: one suffix for the table from the total's digit count, three
decimals, percentages with two, modules sorted by name and indented by depth, Global shown only when
no module shown holds all the FLOPs) in its own words and prints through the same `tabulate` call
(python3-tabulate, PRESERVE_WHITESPACE, colalign left/right/right), which decides the layout and
the parsing of numeric-looking cells. The counts per case are the ones the C++ test makes (the
comment of each case says how).

Run:  /usr/bin/python3 scripts/reference/flop_table_reference.py > tests/golden/flop_tables_torch.json
"""
import json

import tabulate

SUFFIXES = ["", "K", "M", "B", "T"]


def suffix_of(total):
    return SUFFIXES[max(0, min(len(SUFFIXES) - 1, (len(str(total)) - 2) // 3))]


def with_suffix(n, suffix):
    i = SUFFIXES.index(suffix)
    return f"{n / 1000 ** i:.3f}" + suffix


def percent(n, total):
    return "0%" if total == 0 else f"{n / total:.2%}"


def table(counts, depth=2):
    """counts: {module: [(op, flops), ...]} with "Global" among them (if anything was counted)."""
    tabulate.PRESERVE_WHITESPACE = True
    total = sum(n for _, n in counts.get("Global", []))
    suffix = suffix_of(total)
    subsumed = False

    def rows_of(name, indent):
        nonlocal subsumed
        mod_total = sum(n for _, n in counts[name])
        subsumed = subsumed or mod_total >= total
        pad = " " * indent
        rows = [[pad + name, with_suffix(mod_total, suffix), percent(mod_total, total)]]
        rows += [[pad + " - " + op, with_suffix(n, suffix), percent(n, total)] for op, n in counts[name]]
        return rows

    rows = []
    for name in sorted(counts):
        if name == "Global":
            continue
        d = name.count(".") + 1
        if d > depth:
            continue
        rows += rows_of(name, d - 1)
    if "Global" in counts and not subsumed:
        for r in rows:
            r[0] = " " + r[0]
        rows = rows_of("Global", 0) + rows
    if not rows:
        rows = [["Global", "0", "0%"]]
    return tabulate.tabulate(rows, headers=["Module", "FLOP", "% Total"], colalign=("left", "right", "right"))


CASES = {
    # the MLP step (16,32,4, batch 8): forward addmm 8*32*2*16 + 8*4*2*32, backward mm 2048+2048+8192;
    # each Linear's backward mms count for it (flop_modules_reference.py checks these against 1.13's
    # engine): Sequential.0 addmm 8192 and its weight's mm 8192, Sequential.2 addmm 2048 and two mms
    "seed": ({"Global": [("aten.addmm", 10240), ("aten.mm", 12288)],
              "Sequential": [("aten.addmm", 10240), ("aten.mm", 12288)],
              "Sequential.0": [("aten.addmm", 8192), ("aten.mm", 8192)],
              "Sequential.2": [("aten.addmm", 2048), ("aten.mm", 4096)]}, 2),
    # Sequential.0 addmm(32; 8x16, 16x32), Sequential.2 addmm(4; 8x32, 32x4), then mm(8x4, 4x32) outside
    "modules": ({"Global": [("aten.addmm", 10240), ("aten.mm", 2048)],
                 "Sequential": [("aten.addmm", 10240)],
                 "Sequential.0": [("aten.addmm", 8192)],
                 "Sequential.2": [("aten.addmm", 2048)]}, 2),
    "modules_depth1": ({"Global": [("aten.addmm", 10240), ("aten.mm", 2048)],
                        "Sequential": [("aten.addmm", 10240)],
                        "Sequential.0": [("aten.addmm", 8192)],
                        "Sequential.2": [("aten.addmm", 2048)]}, 1),
    # everything inside Sequential: Global is subsumed and not shown
    "subsumed": ({"Global": [("aten.addmm", 10240)], "Sequential": [("aten.addmm", 10240)],
                  "Sequential.0": [("aten.addmm", 8192)], "Sequential.2": [("aten.addmm", 2048)]}, 2),
    # mm(2x3, 3x4) = 48 and mm(3x4, 4x5) = 120: no suffix, tabulate prints the numbers in "g" format
    "small": ({"Global": [("aten.mm", 168)]}, 2),
    # mm(1000x1010, 1010x500) = 1.01e9: shown as 1010.000M, not 1.010B
    "billion": ({"Global": [("aten.mm", 1010000000)]}, 2),
    "empty": ({}, 2),
}

if __name__ == "__main__":
    print(json.dumps({name: table(c, d) for name, (c, d) in CASES.items()}, indent=1))
