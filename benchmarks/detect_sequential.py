"""The classifier attack's final test in ``privet.detect``: one look of ``n_final`` against
the group-sequential looks at 1, 2, 4 and 16 times it (``privet.detect.attack``).

    .venv/bin/python benchmarks/detect_sequential.py                 # about 12 minutes
    .venv/bin/python benchmarks/detect_sequential.py --seeds 3 --private 1

On DP-Sniper's svt3 (claimed 0.1-DP, true ε 0.5 for its ten queries) the attack's event
often has a ratio just above e^0.1 (1.12 at seed 0): a fixed 500,000 per input leaves it
undecided, and detect reported p = 0.29 after the Bonferroni correction over its two
families. Each seed runs ``privet.detect`` (the benchmark's call: vectorized svt3, executor
``processes``, float features off) twice, in fresh processes started the same way,
interleaved: with one look (``attack.GROWTH = 1``, the fixed test of before) and with the
sequential looks (now). The joint p-value must be below 0.01 on the non-private row; the
private rows (run at ``--private`` seeds) must not be flagged, and print what the extra
looks cost in time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
import privet
from privet.detect import attack
from privet.mechanisms import dpsniper as d
name, seed, growth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
attack.GROWTH = growth
t = time.perf_counter()
r = privet.detect(d.vectorized(name), seed=seed, executor="processes", float_features="off")
fam = [c for c in r.candidates if c.details.get("family") == "classifier attack"]
print(json.dumps({"p": r.p_value, "seconds": time.perf_counter() - t,
                  "attack_n": fam[0].n[0] if fam else None,
                  "attack_p": fam[0].p_value if fam else None}))
"""

PRIVATE = ("laplace", "noisy_hist1", "report_noisy_max1", "report_noisy_max2", "svt1",
           "svt2", "laplace_parallel", "numerical_svt")


def run(name: str, seed: int, growth: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, f"dpsniper.{name}", str(seed),
                          str(growth)], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10, help="svt3 seeds (default 10)")
    ap.add_argument("--private", type=int, default=2, help="seeds of each private row")
    a = ap.parse_args()
    from privet.detect.attack import GROWTH

    rows = [("svt3", s) for s in range(a.seeds)] + \
        [(m, s) for m in PRIVATE for s in range(a.private)]
    print(f"{'mechanism':20s} {'seed':>4s} | {'one look: p':>12s} {'s':>6s} | "
          f"{f'looks to {GROWTH}x: p':>16s} {'n':>10s} {'s':>6s}")
    flagged = {1: 0, GROWTH: 0}
    wrong = {1: 0, GROWTH: 0}
    times = {1: [], GROWTH: []}
    for name, seed in rows:
        got = {g: run(name, seed, g) for g in (1, GROWTH)}  # interleaved, one call each
        for g, r in got.items():
            times[g].append(r["seconds"])
            if name == "svt3":
                flagged[g] += r["p"] < 0.01
            else:
                wrong[g] += r["p"] < 0.01
        one, seq = got[1], got[GROWTH]
        n = f"{seq['attack_n']:,}" if seq["attack_n"] else "-"
        print(f"{name:20s} {seed:4d} | {one['p']:12.3g} {one['seconds']:6.1f} | "
              f"{seq['p']:16.3g} {n:>10s} {seq['seconds']:6.1f}", flush=True)
    print(f"\nsvt3 flagged (p < 0.01): one look {flagged[1]} of {a.seeds}, "
          f"sequential {flagged[GROWTH]} of {a.seeds}")
    print(f"private rows flagged: one look {wrong[1]}, sequential {wrong[GROWTH]} "
          f"(of {len(PRIVATE) * a.private})")
    ratio = sum(times[GROWTH]) / max(sum(times[1]), 1e-9)
    print(f"total detect time: one look {sum(times[1]):.0f} s, sequential "
          f"{sum(times[GROWTH]):.0f} s (x{ratio:.2f})")


if __name__ == "__main__":
    main()
