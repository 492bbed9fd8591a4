"""DP-Finder's evaluation (Sec. 6, Fig. 12) with privet.search: certified lower bounds on
epsilon for the nine DP-Finder algorithms, search vs. random search, over seeded runs.

    /work/venv/bin/python benchmarks/search_dpfinder.py            # 20 runs x 9 algorithms
    /work/venv/bin/python benchmarks/search_dpfinder.py --quick    # 5 runs
    /work/venv/bin/python benchmarks/search_dpfinder.py --runs 20 --iterations 2 --workers 2

Each run is ``privet.search(mech, iterations=I, seed=s, baseline=True)``: I DP-Finder
iterations (random or contrast triple, adaptive correlated estimate, SLSQP on the Relaxed
surrogate, polish, tail walk) and the random-search baseline with the same number of random
triples; both best triples are confirmed on a fresh sample ("eps >= L with confidence 0.9").
Printed per algorithm: median and best certified eps of the search, the known upper bound (DP-Finder
Sec. 6.2), the random-search median, and the time per search iteration. The paper's Fig. 12
shows exact (PSI) violations of 50 counterexamples; ours are certified lower bounds.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import math
import os
import statistics
import sys
import time

NAMES = ["above_threshold", "at1", "at2", "at3", "at4", "at5", "noisy_max", "exp_mech", "sum"]
LABELS = {"above_threshold": "AT", "at1": "AT1", "at2": "AT2", "at3": "AT3", "at4": "AT4",
          "at5": "AT5", "noisy_max": "noisyMax", "exp_mech": "expMech", "sum": "sum"}
UPPER = {"above_threshold": 0.45, "at1": 0.1, "at2": 0.1, "at3": 0.2, "at4": 0.175,
         "at5": math.inf, "noisy_max": 0.1, "exp_mech": 0.1, "sum": 0.1}
# the paper's PSI medians are only shown as box plots (Fig. 12); the text quotes AT 0.173
# (max over 50), noisyMax >= 0.099, expMech ~0.1 in all iterations.
PAPER = {"above_threshold": "0.173 (best)", "noisy_max": ">= 0.099", "exp_mech": "~0.1"}


def one_run(name: str, seed: int, iterations: int) -> dict:
    import privet.mechanisms as lib
    from privet.search import search

    mech = lib.get(f"dpfinder.{name}")
    t0 = time.perf_counter()
    b = search(mech, iterations=iterations, seed=seed, baseline=True)
    base = b.details["baseline"]
    its = [r["seconds"] for r in b.details["trace"]]
    return {"name": name, "seed": seed, "value": b.value, "unbounded": b.details.get("unbounded"),
            "exact": b.exact, "base": base.value, "base_unbounded": base.details.get("unbounded"),
            "per_iteration": sum(its) / max(len(its), 1), "seconds": time.perf_counter() - t0,
            "estimate": b.details.get("search_estimate")}


def fmt(v: float, unbounded: bool = False) -> str:
    if math.isinf(v):
        return "∞"
    return f"{v:.4f}" + ("↑" if unbounded else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--quick", action="store_true", help="5 runs per algorithm")
    ap.add_argument("--only", default="", help="comma-separated subset, e.g. at5,noisy_max")
    a = ap.parse_args(argv)
    runs = 5 if a.quick else a.runs
    names = [n for n in NAMES if not a.only or n in a.only.split(",")]
    jobs = [(n, s, a.iterations) for n in names for s in range(runs)]
    print(f"privet.search on the DP-Finder algorithms: {runs} seeded runs x "
          f"{a.iterations} iteration(s), {a.workers} worker process(es); confidence 0.9")
    print("(timings on a shared 2-core machine; other jobs were running)\n")
    t0 = time.perf_counter()
    results: dict[str, list[dict]] = {n: [] for n in names}
    with cf.ProcessPoolExecutor(max_workers=a.workers) as ex:
        futs = [ex.submit(one_run, *j) for j in jobs]
        for done, f in enumerate(cf.as_completed(futs), 1):
            r = f.result()
            results[r["name"]].append(r)
            print(f"  [{done}/{len(jobs)}] {r['name']} seed {r['seed']}: {r['value']:.4g} "
                  f"(random {r['base']:.4g}, {r['seconds']:.1f} s)", file=sys.stderr,
                  flush=True)
    total = time.perf_counter() - t0
    head = (f"{'algorithm':10s} {'median ε≥':>10s} {'best ε≥':>10s} {'known UB':>9s} "
            f"{'random med':>10s} {'search≥rand':>11s} {'s/iter':>7s} {'s/run':>6s}  paper")
    print(head)
    print("-" * len(head))
    ok_all = True
    higher = 0
    for n in names:
        rs = results[n]
        vals = [r["value"] for r in rs]
        base = [r["base"] for r in rs]
        med, bmed = statistics.median(vals), statistics.median(base)
        best = max(rs, key=lambda r: r["value"])
        unb = sum(1 for r in rs if r["unbounded"] or math.isinf(r["value"]))
        ge = med >= bmed
        ok_all &= ge
        higher += med > bmed
        per_it = statistics.mean(r["per_iteration"] for r in rs)
        per_run = statistics.mean(r["seconds"] for r in rs)
        note = PAPER.get(n, "")
        if n == "at5":
            note = f"{unb}/{len(rs)} runs ∞ or unbounded"
        print(f"{LABELS[n]:10s} {fmt(med):>10s} {fmt(best['value'], best['unbounded']):>10s} "
              f"{fmt(UPPER[n]):>9s} {fmt(bmed):>10s} {'yes' if ge else 'NO':>11s} "
              f"{per_it:7.2f} {per_run:6.2f}  {note}")
    print(f"\nsearch median >= random median for {'every' if ok_all else 'NOT every'} "
          f"algorithm; strictly higher for {higher}/{len(names)}.")
    print("↑ = the event never occurred under x′ in the fresh sample: a certified bound that "
          "grows with the sample size (unbounded violation).")
    print(f"total wall time {total:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
