"""What the witness search chose on RAPPOR, judged exactly.

Reads runs of ``benchmarks/blackbox_dpsniper.py --json FILE`` (those written since the rows
keep ``event_spec`` and ``counts``) and, for every run of ``dpsniper.rappor`` and
``dpsniper.one_time_rappor``, computes its event's exact probabilities under both inputs by
enumerating the 2^20 reports (the bits are independent given the Bloom filter, each 1 with
the probability ``privet.mechanisms.dpsniper.bit_probability`` gives). It prints, per run:

* the event's exact log-ratio, and the share of the *full pattern* (every differing bit on
  x's side: the event of the largest ratio, the instance's ε) it covers;
* the run's fresh estimate ln(k1/k2) and its certificate's margin (estimate − certificate);
* ``judged``: the exact log-ratio minus that margin -- the certificate the run's choice gives
  without the fresh sample's own noise (about ±0.001 at 10^8 paired samples, ±0.003 at
  5·10^7 independent ones), so two boxes or two builds can be compared on fewer runs;
* ``above``: whether the certificate exceeds its *own event's* exact log-ratio, which a
  sound certificate at confidence 0.9 does in at most a tenth of the runs (a sharper check
  than the count against the true ε, since most events sit below it);
* for a row with runs of both boxes, the black box's certificate (the exact conditional
  test of independent pairs) simulated at its runs' median size and event probability,
  and how often its five-seed median lies above the white box's judged median, above
  that plus 0.001 and above the true ε: what the rule "white-box median at least the
  black-box median" leaves to chance even for a better or an exact white box.

    .venv/bin/python benchmarks/rappor_events.py benchmarks/results/bw27f.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys

import numpy as np
from scipy import stats

import privet.attacks.events  # noqa: F401 - registers the threshold events with from_spec
from privet.core.events import from_spec
from privet.mechanisms import dpsniper as d
from privet.stats.bounds import conditional_bounds

CONFIDENCE = 0.9
NAMES = ("dpsniper.rappor", "dpsniper.one_time_rappor")


def reports() -> np.ndarray:
    """Every report of the filter's bits, one per row (2^FILTER rows)."""
    codes = np.arange(1 << d.FILTER)
    return ((codes[:, None] >> np.arange(d.FILTER)) & 1).astype(np.int64)


def probabilities(bits: np.ndarray, args: dict, outs: np.ndarray) -> np.ndarray:
    """The probability of every report in ``outs`` given the Bloom filter ``bits``."""
    one = np.where(np.asarray(bits) == 1, d.bit_probability(1, **args),
                   d.bit_probability(0, **args))
    return np.prod(np.where(outs == 1, one, 1 - one), axis=1)


def judge(run: dict, outs: np.ndarray) -> dict | None:
    """The exact figures of one run (module docstring); None without a spec or counts."""
    if not run.get("event_spec") or not run.get("counts"):
        return None
    args = d.get_local(run["name"]).resolve_args(None)
    b1, b2 = (d.bloom_bits(int(run[k][0])) for k in ("d1", "d2"))
    q1, q2 = probabilities(b1, args, outs), probabilities(b2, args, outs)
    inside = np.asarray(from_spec(run["event_spec"]).contains(outs), bool)
    p1, p2 = float(q1[inside].sum()), float(q2[inside].sum())
    differ = np.nonzero(b1 != b2)[0]
    full = np.all(outs[:, differ] == b1[differ], axis=1)
    k1, k2 = (float(k) for k in run["counts"])
    exact = math.log(p1 / p2)
    estimate = math.log(k1 / k2) if k1 > 0 and k2 > 0 else math.nan
    margin = estimate - float(run["value"])
    return {"exact": exact, "p1": p1, "cover": float(q1[inside & full].sum() / q1[full].sum()),
            "best": math.log(q1[full].sum() / q2[full].sum()), "estimate": estimate,
            "margin": margin, "judged": exact - margin,
            "above": float(run["value"]) > exact}


SIMULATED = 20_000  # simulated black-box runs
SEEDS = 5           # runs per box in a column


def simulate_black(p1: float, eps: float, n: int, seed: int = 0) -> np.ndarray:
    """Certificates of the black box's exact conditional test on ``n`` independent pairs
    for an event of probabilities ``p1`` and ``p1 e^-eps`` (:data:`SIMULATED` runs)."""
    p2 = p1 * math.exp(-eps)
    cells = [p1 * p2, p1 * (1 - p2), p2 * (1 - p1)]
    counts = np.random.default_rng(seed).multinomial(n, [*cells, 1 - sum(cells)], SIMULATED)
    n11, n10, n01 = counts[:, 0], counts[:, 1], counts[:, 2]
    return conditional_bounds(n10, n01, n11 + n10, n11 + n01, n, CONFIDENCE)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+", help="runs of blackbox_dpsniper.py --json")
    args = ap.parse_args(argv)
    runs = []
    for path in args.json:
        with open(path) as f:
            runs += [r for r in json.load(f) if r.get("name") in NAMES and "value" in r]
    outs = reports()
    above = judged_runs = 0
    for name in NAMES:
        seen: dict = {}
        for kind in ("black", "white"):
            rows = sorted((r for r in runs if r["name"] == name and r["kind"] == kind),
                          key=lambda r: r["seed"])
            got = [(r, judge(r, outs)) for r in rows]
            got = [(r, j) for r, j in got if j is not None]
            if not got:
                continue
            print(f"{name} {kind} box ({len(got)} runs, {len(rows) - len(got)} without a "
                  "spec):")
            for r, j in got:
                print(f"  seed {r['seed']:2d}: certified {r['value']:.4f} at "
                      f"{r['n_confirm']:.2e} pairs; event exact {j['exact']:.4f} (true "
                      f"{j['best']:.4f}), covers {j['cover']:.0%} of the full pattern, "
                      f"p = {j['p1']:.5f}; estimate {j['estimate']:.4f}, margin "
                      f"{j['margin']:.4f}; judged {j['judged']:.4f}"
                      + ("  (above its event's exact ratio)" if j["above"] else ""))
            cert = [r["value"] for r, _ in got]
            judged = [j["judged"] for _, j in got]
            print(f"  median: certified {statistics.median(cert):.4f}, judged "
                  f"{statistics.median(judged):.4f} (mean {statistics.fmean(judged):.4f})")
            above += sum(j["above"] for _, j in got)
            judged_runs += len(got)
            seen[kind] = got
        if len(seen) == 2:
            black = seen["black"]
            n = int(statistics.median(r["n_confirm"] for r, _ in black))
            p1 = statistics.median(j["p1"] for _, j in black)
            true = black[0][1]["best"]
            sim = simulate_black(p1, true, n)
            med5 = np.median(sim[: len(sim) // SEEDS * SEEDS].reshape(-1, SEEDS), axis=1)
            white = statistics.median(j["judged"] for _, j in seen["white"])
            print(f"  the black box's certificate simulated ({SIMULATED} runs of {n:.2e} "
                  f"independent pairs, p = {p1:.5f}): median {np.median(sim):.4f}, spread "
                  f"{np.std(sim):.4f}; its {SEEDS}-seed median lies above the white box's "
                  f"judged median {white:.4f} in {np.mean(med5 > white):.1%} of columns, "
                  f"above {white + 0.001:.4f} in {np.mean(med5 > white + 0.001):.1%}, "
                  f"above the true {true:.4f} in {np.mean(med5 > true):.1%}")
    if judged_runs:
        tail = float(stats.binom.sf(above - 1, judged_runs, 1 - CONFIDENCE))
        print(f"certificates above their own event's exact log-ratio: {above} of "
              f"{judged_runs} (at most {1 - CONFIDENCE:.0%} expected; P[Binomial({judged_runs}, "
              f"{1 - CONFIDENCE:g}) ≥ {above}] = {tail:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
