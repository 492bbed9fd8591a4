"""What the black box's witness search chose on sparse vector, judged exactly.

Reads runs of ``benchmarks/blackbox_dpsniper.py --json FILE`` and, for every svt1, svt2
and svt4 run whose event is a set of answers ("k FALSE, then True"), prints the chosen
event's exact probabilities under both inputs (``privet.mechanisms.dpsniper.
svt_answer_probability``, by quadrature) and the certificate a fresh sample of the size the
run drew would give at those probabilities (the better of the union and conditional
certificates, as the run plans it). That figure takes the fresh sample's own noise out of a
run's bound (about +-0.002 at 4e7 pairs for an answer of probability 0.01), so two builds'
witness searches can be compared on fewer runs. Runs whose event is a threshold of a fitted
score are counted but not judged.

    .venv/bin/python benchmarks/svt_answers.py new.json --against old.json

Two sets of runs (``--against``) print side by side, per mechanism: the medians of the
certified bounds and of the exact projections, over the seeds both sets hold.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys

import numpy as np

from privet.mechanisms.dpsniper import SVT_SCALES, svt_answer_probability
from privet.search.blackbox import PLANS
from privet.stats.bounds import projected

CONFIDENCE = 0.9


def answer_index(row: list[float]) -> int:
    """k of the answer "k FALSE, then True" (the index of the first 1; all FALSE: len)."""
    return row.index(1) if 1 in row else len(row)


def projection(p1: float, p2: float, n: int) -> float:
    """The certificate n fresh pairs give at these probabilities (expected counts, the
    better of the plans the black-box search chooses between, without the shrink)."""
    k1, k2 = n * p1, n * p2
    n11 = k1 * k2 / n  # independent samples: the expected pairing
    return max(float(projected(n11, k1 - n11, k2 - n11, n, n, CONFIDENCE, method, shrink=0.0,
                               share=share)) for method, share in PLANS)


def judge(run: dict) -> tuple[float, float, float] | None:
    """(log-ratio, probability under D1, projected certificate) of a run's chosen answers;
    None when its event is not a set of answers."""
    name = run["name"] if run["name"].startswith("dpsniper.") else f"dpsniper.{run['name']}"
    event = str(run.get("event") or "")
    if name not in SVT_SCALES or not event.startswith("ω ∈"):
        return None
    cells = [answer_index(json.loads(r)) for r in re.findall(r"\[[^\[\]]*\]", event)]
    scales = SVT_SCALES[name]
    p1, p2 = (sum(svt_answer_probability(np.asarray(x, float), k, *scales) for k in cells)
              for x in (run["d1"], run["d2"]))
    if p1 <= 0 or p2 <= 0:
        return None
    return math.log(p1 / p2), p1, projection(p1, p2, int(run["n_confirm"]))


def load(paths: list[str]) -> dict[str, dict[int, dict]]:
    out: dict[str, dict[int, dict]] = {}
    for path in paths:
        with open(path) as f:
            for run in json.load(f):
                name = run["name"].removeprefix("dpsniper.")
                if run.get("kind", "black") == "black" and f"dpsniper.{name}" in SVT_SCALES:
                    out.setdefault(name, {})[int(run["seed"])] = run
    return out


def median(values: list[float]) -> str:
    values = [v for v in values if not math.isnan(v)]
    return f"{statistics.median(values):.4f}" if values else "—"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+", help="runs of blackbox_dpsniper.py --json")
    ap.add_argument("--against", nargs="*", default=[], help="runs to compare with")
    args = ap.parse_args(argv)
    sets = {"runs": load(args.json)}
    if args.against:
        sets["against"] = load(args.against)
    for name in sorted(sets["runs"]):
        seeds = sorted(set.intersection(*(set(s.get(name, {})) for s in sets.values())))
        if not seeds:
            continue
        print(f"{name}: seeds {seeds[0]}–{seeds[-1]} ({len(seeds)})")
        for label, runs in sets.items():
            got, exact = [], []
            for seed in seeds:
                run = runs[name][seed]
                j = judge(run)
                got.append(float(run["value"]))
                exact.append(j[2] if j else math.nan)
                if j:
                    print(f"  {label:8s} seed {seed}: certified {run['value']:.4f}, chosen "
                          f"answers' exact log-ratio {j[0]:.4f} (p = {j[1]:.4f}), projected "
                          f"at {run['n_confirm']:.2e} pairs {j[2]:.4f}")
                else:
                    print(f"  {label:8s} seed {seed}: certified {run['value']:.4f} (event "
                          "not a set of answers: not judged)")
            print(f"  {label:8s} median: certified {median(got)}, exact projection "
                  f"{median(exact)} ({sum(math.isnan(v) for v in exact)} not judged)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
