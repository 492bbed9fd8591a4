"""How often a fresh column of ``blackbox_dpsniper.py`` would put the white-box median below
the black-box median, row by row, from the runs recorded so far.

Issue 13 asks the white box (the mechanism written against the noise API) to reach at
least the black-box figures, and the benchmark reads that as: over five seeds, the
white-box median is at least the black-box median on every row. On rows where both boxes
certify about the same value, which of two five-seed medians is larger is decided by the
spread of the runs, whatever the code. This script puts a number on that. For each row it
pools every recorded run of each box (seeds of one build, or of builds the caller vouches
behave alike), draws five runs of each box with replacement, and counts how often the
white box's median does not reach the black box's by the benchmark's own rule (a
bootstrap over runs, 20,000 draws). It prints that chance per row and, assuming rows are
independent, the chance that a fresh column passes on every row.

The estimate is only as good as the runs behind it. Five runs per box give a crude one,
and the script prints how many each row has. It certifies nothing about the mechanisms:
it describes the benchmark's rule.

    .venv/bin/python benchmarks/white_black_odds.py benchmarks/results/bw27[abcf].json \\
        benchmarks/results/bw28_*.json
"""

from __future__ import annotations

import argparse
import collections
import json
import math

import numpy as np
from blackbox_dpsniper import white_reaches  # this script's directory is on sys.path

from privet.mechanisms import dpsniper as d

SEEDS = 5        # runs per box in a column (the protocol)
DRAWS = 20_000   # bootstrap columns per row


def load(paths: list[str], commits: set[str] | None, sources: set[str] | None = None
         ) -> dict:
    """``{name: {"black": [values], "white": [values]}}`` of the search runs in ``paths``
    (an unbounded certificate counts as infinity; a (name, kind, seed) seen twice keeps
    the later file's run); ``commits`` and ``sources`` (digests of the privet sources,
    recorded since d505249) keep only the runs of those builds."""
    runs: dict = {}
    for path in paths:
        with open(path) as fh:
            for r in json.load(fh):
                if r.get("kind") not in ("black", "white"):
                    continue
                if commits and str(r.get("commit", "")).rstrip("+") not in commits:
                    continue
                if sources and str(r.get("source")) not in sources:
                    continue
                v = math.inf if r.get("unbounded") else float(r["value"])
                runs[(r["name"], r["kind"], int(r["seed"]))] = v
    rows: dict = collections.defaultdict(lambda: {"black": [], "white": []})
    for (name, kind, _), v in sorted(runs.items()):
        rows[name][kind].append(v)
    return rows


def fail_chance(true: float | None, white: list[float], black: list[float],
                rng: np.random.Generator, seeds: int = SEEDS, draws: int = DRAWS) -> float:
    """The share of bootstrap columns (``seeds`` runs of each box, drawn with replacement)
    whose white-box median does not reach the black-box median (the benchmark's own rule,
    :func:`blackbox_dpsniper.white_reaches`, for a row of true ε ``true``)."""
    w = np.asarray(white, float)[rng.integers(0, len(white), (draws, seeds))]
    b = np.asarray(black, float)[rng.integers(0, len(black), (draws, seeds))]
    return float(np.mean(~white_reaches(true, np.median(w, axis=1), np.median(b, axis=1))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+", help="runs of blackbox_dpsniper.py --json")
    ap.add_argument("--commits", nargs="*", help="keep only runs of these builds")
    ap.add_argument("--sources", nargs="*",
                    help="keep only runs of these source digests (blackbox_dpsniper.py's)")
    ap.add_argument("--seeds", type=int, default=SEEDS,
                    help=f"runs per box in a column (default {SEEDS}, the issue's)")
    ap.add_argument("--seed", type=int, default=0, help="of the bootstrap (default 0)")
    a = ap.parse_args()
    rows = load(a.json, set(a.commits) if a.commits else None,
                set(a.sources) if a.sources else None)
    rng = np.random.default_rng(a.seed)
    print(f"bootstrap columns of {a.seeds} runs per box, {DRAWS} per row "
          f"(rows independent); runs pooled from {len(a.json)} files")
    print(f"{'mechanism':<28} {'runs w/b':>9} {'white med':>10} {'black med':>10} "
          f"{'P[white med < black med]':>26}")
    passing = 1.0
    for name, kinds in rows.items():
        w, b = kinds["white"], kinds["black"]
        if not w or not b:
            continue
        p = fail_chance(d.get_local(name).true_epsilon, w, b, rng, a.seeds)
        passing *= 1.0 - p
        print(f"{name.removeprefix('dpsniper.'):<28} {len(w):>4}/{len(b):<4} "
              f"{np.median(w):>10.4f} {np.median(b):>10.4f} {p:>26.3f}")
    print(f"chance that a fresh column has the white-box median at least the black-box "
          f"median on every row: {passing:.3f}")


if __name__ == "__main__":
    main()
