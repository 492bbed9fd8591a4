"""A time budget and flat memory on wide outputs: ``privet.search`` on a vectorized histogram
of 100, 1,000 and 10,000 noisy counts (``m(a, n_samples)``, each count plus Lap(2): 0.5-DP
under one_differs(1), claimed 0.5), at privet's default budget of 55 s.

    .venv/bin/python benchmarks/wide_outputs.py                   # widths 100 1000 10000
    .venv/bin/python benchmarks/wide_outputs.py --widths 1000 --seconds 30
    .venv/bin/python benchmarks/wide_outputs.py --detect --widths 1000 10000 --src /tmp/old/src

``--detect``: ``privet.detect`` instead, at its default sizes, on the same histogram with
Lap(1) counts (1-DP, claimed 0.5: a violation) and the float-exact features off, so the
verdict is about the real-number epsilon. ``--src DIR``: each width also runs on the privet
sources in DIR (e.g. ``git archive OLD src | tar -x -C /tmp/old``), in a fresh process
started the same way, right after the run on these sources: both sides of a before/after
comparison in the same run, interleaved (before the change, at 9b18230, StatDP's
coordinate events read every entry).

Each width runs in a fresh Python process (started the same way for every width, one after
the other), so its peak resident memory is its own. Printed per width: the budget, the wall
time of the ``privet.search`` call and its ratio to the budget, the peak resident memory of
the process, the stage ends (fits, race, certificate), the fresh sample, the certified bound
and the verdict. The float-exact features are on (privet's default for black boxes):
integer counts plus NumPy's Laplace noise are porous in doubles, so the certified bound
exceeds the real-number epsilon (``benchmarks/floating_point.py`` explains why); what this
benchmark measures is time and memory.

Before the wide-output changes (commit 9362a71, measured once on this machine, not re-run
here): width 1,000 took 716 s with a fixed fresh sample of 2^16 pairs and peaked at 16.9 GB
(logistic regression on 16,000 one-hot features of the float-exact codes), and its default
run with the 2^22-pair least fresh sample was stopped after 15 minutes; width 10,000 was
killed by the kernel at 24 GiB.
"""

from __future__ import annotations

import argparse
import sys

from _baseline import run_python

CHILD = r"""
import json, resource, sys, time
import numpy as np
import privet
from privet.neighbors import one_differs

def histogram(a, n_samples):
    a = np.asarray(a, dtype=float)
    return a[None, :] + np.random.laplace(0.0, 2.0, size=(n_samples, a.size))

width, seconds, seed = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
mech = privet.from_vectorized(histogram, epsilon=0.5, neighbors=one_differs(1),
                              domain=privet.Domain(length=width, low=0, high=10, integer=True),
                              name=f"histogram of {width}")
t0 = time.perf_counter()
b = privet.search(mech, seed=seed, seconds=seconds, progress=False)
wall = time.perf_counter() - t0
print(json.dumps({"wall": wall, "value": b.value, "verdict": b.details.get("verdict", ""),
                  "stages": b.details.get("stages"), "n": b.details.get("n_confirm"),
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

DETECT_CHILD = r"""
import json, resource, sys, time
import numpy as np
import privet
from privet.neighbors import one_differs

def histogram(a, n_samples):
    a = np.asarray(a, dtype=float)
    return a[None, :] + np.random.laplace(0.0, 1.0, size=(n_samples, a.size))

width, seed = int(sys.argv[1]), int(sys.argv[3])
mech = privet.from_vectorized(histogram, epsilon=0.5, neighbors=one_differs(1),
                              domain=privet.Domain(length=width, low=0, high=10, integer=True),
                              name=f"histogram of {width}")
t0 = time.perf_counter()
r = privet.detect(mech, seed=seed, float_features="off")
wall = time.perf_counter() - t0
statdp = [c for c in r.candidates if c.details.get("family") != "classifier attack"]
print(json.dumps({"wall": wall, "p": r.p_value, "statdp": statdp[0].p_value if statdp else None,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def child(code: str, width: int, a: argparse.Namespace, src: str | None) -> dict | str:
    """One run in a fresh process (on the sources in ``src`` when given): its numbers, or
    the last line of its error."""
    try:
        return run_python(code, src, argv=(width, a.seconds, a.seed))
    except RuntimeError as err:
        return f"failed: {str(err).strip().splitlines()[-1]}"


def runs(code: str, a: argparse.Namespace, sides: list):
    """``(width, side, src, numbers)`` of each run that finished, width by width and side by
    side; a run that failed prints its line and is left out."""
    for width in a.widths:
        for side, src in sides:
            r = child(code, width, a, src)
            if isinstance(r, str):
                print(f"{width:>7} {side:>6} {r}")
                continue
            yield width, side, src, r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", type=int, nargs="*", default=[100, 1000, 10_000])
    ap.add_argument("--seconds", type=float, default=55.0, help="the search's time budget")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--detect", action="store_true",
                    help="privet.detect on Lap(1) counts (a violation) instead of search")
    ap.add_argument("--src", default=None,
                    help="also run each width on the privet sources in this directory")
    a = ap.parse_args(argv)
    sides = [("this", None)] + ([("--src", a.src)] if a.src else [])
    if a.detect:
        return detect_table(a, sides)
    print(f"privet search on a vectorized histogram of Lap(2) counts (0.5-DP, claimed 0.5), "
          f"budget {a.seconds:g} s, one process per width")
    head = (f"{'width':>7} {'src':>6} {'wall s':>8} {'/budget':>8} {'peak RSS':>9} "
            f"{'fits s':>7} {'race s':>7} {'fresh n':>9} {'certified':>10}  verdict")
    print(head)
    print("-" * len(head))
    worst = 0.0
    for width, side, src, r in runs(CHILD, a, sides):
        st = r["stages"] or {}
        if src is None:
            worst = max(worst, r["wall"] / a.seconds)
        print(f"{width:>7} {side:>6} {r['wall']:8.1f} {r['wall'] / a.seconds:8.2f} "
              f"{r['rss'] / 2**30:7.2f} G {st.get('fits', float('nan')):7.1f} "
              f"{st.get('race', float('nan')):7.1f} {r['n'] or 0:9,d} {r['value']:10.4g}  "
              f"{r['verdict'][:60]}")
    print(f"longest run (these sources): {worst:.2f} x the budget")
    return 0


def detect_table(a: argparse.Namespace, sides: list) -> int:
    print("privet detect on a vectorized histogram of Lap(1) counts (1-DP, claimed 0.5: a "
          "violation), default sizes, float-exact features off, one process per width and "
          "side")
    head = (f"{'width':>7} {'src':>6} {'wall s':>8} {'peak RSS':>9} {'p':>10} "
            f"{'StatDP p':>10}")
    print(head)
    print("-" * len(head))
    walls: dict = {}
    for width, side, _src, r in runs(DETECT_CHILD, a, sides):
        walls[width, side] = (r["wall"], r["rss"])
        sp = "—" if r["statdp"] is None else f"{r['statdp']:.2g}"
        print(f"{width:>7} {side:>6} {r['wall']:8.1f} {r['rss'] / 2**30:7.2f} G "
              f"{r['p']:10.2g} {sp:>10}")
        if side == sides[-1][0] and (width, "this") in walls and (width, "--src") in walls:
            (w1, m1), (w0, m0) = walls[width, "this"], walls[width, "--src"]
            print(f"{'':>7} {'':>6} --src / this: {w0 / w1:.1f}x the time, "
                  f"{m0 / m1:.1f}x the memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
