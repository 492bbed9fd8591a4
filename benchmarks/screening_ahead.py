"""The black-box screening with its pairs drawn ahead, against the commit before it (issue 13).

The witness search screens some 80 input pairs (fit cheap models on half of a sample, judge
one event on the other half), then halves them. Up to f165366 each pair's outputs were drawn
while this process waited and its models fitted while the workers waited: one of the two
cores worked at a time. Since 877b162 the pairs after the timed probe, and each halving
round, are drawn ahead by the executor's workers (``privet.attacks.sampling.draw_pairs``)
while this process fits the last pair's models.

Like for like: the same call, ``privet.attacks.search_witness`` with a fixed budget (no time
budget, so every sample size is fixed and both commits draw the same outputs and end on the
same witness with the same counts, which is checked), each in a fresh interpreter with a
process pool of two workers, the two commits interleaved run by run. Printed per mechanism:
the median wall seconds of the screening stage (screening, local search and halving, read
off the search's trace) and of the whole search, for both commits, and their ratio.

    .venv/bin/python benchmarks/screening_ahead.py                 # 4 mechanisms, 3 rounds
    .venv/bin/python benchmarks/screening_ahead.py --rounds 1 --only svt1
    .venv/bin/python benchmarks/screening_ahead.py --against <ref>  # another baseline
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _baseline import ROOT, baseline_src, run_python  # noqa: E402

BASELINE = "f165366"  # the last commit that drew each screened pair while it waited
MECHANISMS = ("svt1", "svt34_parallel", "rappor", "prefix_sum")

SNIPPET = """
import json, time
from privet.attacks import Budget
from privet.attacks.witness import search_witness
from privet.mechanisms import dpsniper as d
from privet.search.blackbox import certificate_objective
box = d.vectorized("dpsniper.{name}")
budget = Budget(n_train=1 << 15, n_fit=1 << 17, n_select=1 << 17, finalists=4,
                models=("table", "bins", "logistic", "stats"), float_features="off")
objective = certificate_objective(1 << 25, 0.9, paired=False)
t0 = time.perf_counter()
best, trace, stopped = search_witness(box, objective, budget=budget, seed={seed},
                                      executor="processes")
total = time.perf_counter() - t0
screen = max(t["seconds"] for t in trace if t["stage"] != "select")
pairs = sum(t["n"] for t in trace if t["stage"] != "select")
print(json.dumps({{"screen": screen, "total": total, "pairs": pairs,
                  "witness": [best.x.tolist(), best.x2.tolist(), list(best.counts)]}}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="runs per commit and mechanism")
    ap.add_argument("--only", nargs="*", default=None, help="mechanisms (e.g. svt1 rappor)")
    ap.add_argument("--against", default=BASELINE, help=f"baseline ref (default {BASELINE})")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    base = baseline_src(a.against)
    if base is None:
        print(f"cannot extract {a.against} with git; nothing to compare")
        return 1
    here = ROOT / "src"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"screening drawn ahead (this checkout) against {a.against}: fixed budget "
          f"(n_train 2^15, n_fit 2^17), process pool, {a.rounds} interleaved rounds, seed "
          f"{a.seed}; load average {load:.2f} on {os.cpu_count()} cores")
    names = a.only or list(MECHANISMS)
    rows = []
    for name in names:
        got: dict[str, list[dict]] = {"base": [], "here": []}
        for _ in range(a.rounds):
            for side, src in (("base", base), ("here", here)):
                got[side].append(run_python(SNIPPET.format(name=name, seed=a.seed), src))
        same = all(r["witness"] == got["base"][0]["witness"] and r["pairs"] ==
                   got["base"][0]["pairs"] for r in got["base"] + got["here"])
        med = {side: {k: statistics.median(r[k] for r in runs) for k in ("screen", "total")}
               for side, runs in got.items()}
        rows.append((name, got["here"][0]["pairs"], med, same))
        print(f"  {name:16s} screened {got['here'][0]['pairs']:>11,} pairs   screening "
              f"{med['base']['screen']:6.2f} s -> {med['here']['screen']:6.2f} s "
              f"({med['base']['screen'] / med['here']['screen']:.2f}x)   whole search "
              f"{med['base']['total']:6.2f} s -> {med['here']['total']:6.2f} s "
              f"({med['base']['total'] / med['here']['total']:.2f}x)   same witness and "
              f"counts: {'yes' if same else 'NO'}", flush=True)
    ratios = [m["base"]["screen"] / m["here"]["screen"] for _, _, m, _ in rows]
    print(f"screening stage, median speed-up over {len(rows)} mechanisms: "
          f"{statistics.median(ratios):.2f}x; every run identical: "
          f"{'yes' if all(s for *_, s in rows) else 'NO'}")
    return 0 if all(s for *_, s in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
