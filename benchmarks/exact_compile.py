"""The Compile interpreter against Enumerate, and the exact engine's targets.

For every discrete mechanism of the library, the docs and the tests, prints the tight e^eps
computed from the compiled BDD (``backend="bdd"``) and by Enumerate, as Fractions (they must
be equal; the script stops if not), and both times. Then the targets of issue 17, with
``backend="auto"`` (the cost-based choice is printed):

* FAIER's discrete noisy max, 5 queries, exact epsilon end to end: < 0.5 s;
* exhaustive randomized response, n = 12 (4,096 inputs x 4,096 outputs): < 10 s;
* tight (alpha, beta)-accuracy of RRcount, n = 1,000, over the randomized-response set
  A_RRcount (Eq. 10, 1,001 inputs): < 10 s.

Times are wall clock and CPU (time.process_time) of one call in this process; the machine's
load average is printed first, since shared cores make wall times noisy.

    .venv/bin/python benchmarks/exact_compile.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))          # the tests' mechanisms are importable from here

import privet  # noqa: E402
from privet.exact import accuracy, exact  # noqa: E402

console = Console(width=200)


def _timed(f):
    w, c = time.perf_counter(), time.process_time()
    out = f()
    return out, time.perf_counter() - w, time.process_time() - c


def mechanisms(quick: bool) -> list[tuple[str, object, int]]:
    from tests.exact.test_compile import _docs_rr, clipped_sum_max, rr_mod
    from tests.exact.test_exact import rr_count_mech, rr_mech
    from tests.search.mechs import geometric

    lib = privet.mechanisms.get
    return [
        ("wmc.randomized_response", lib("wmc.randomized_response"), 6 if quick else 8),
        ("wmc.rr_count", lib("wmc.rr_count"), 6 if quick else 8),
        ("wmc.geometric_above_threshold", lib("wmc.geometric_above_threshold"), 3),
        ("faier.truncated_geometric", lib("faier.truncated_geometric"), 3),
        ("faier.discrete_noisy_max", lib("faier.discrete_noisy_max"), 4 if quick else 5),
        ("faier.discrete_above_threshold", lib("faier.discrete_above_threshold"), 3),
        ("docs: my_mechanisms.randomized_response", _docs_rr(), 3),
        ("tests: rr_mech (np.where)", rr_mech(5), 5),
        ("tests: rr_count_mech", rr_count_mech(5), 5),
        ("tests: suite user file rr (% 2)", rr_mod, 3),
        ("tests: search geometric (alpha = e^-0.5)", geometric, 1),
        ("tests: clipped_sum_max (discrete vector, cumsum)", clipped_sum_max, 3),
    ]


def compare(quick: bool) -> None:
    t = Table(title="Compiled BDD vs Enumerate: tight e^eps (exact Fractions)",
              title_justify="left")
    for col in ("mechanism", "n", "e^eps compiled", "e^eps Enumerate", "equal",
                "compiled s (wall / CPU)", "Enumerate s (wall / CPU)", "BDD nodes"):
        t.add_column(col, justify="right")
    for name, mech, n in mechanisms(quick):
        b, bw, bc = _timed(lambda m=mech, n=n: exact(m, length=n, backend="bdd",
                                                     fractions=True))
        e, ew, ec = _timed(lambda m=mech, n=n: exact(m, length=n, backend="enumerate",
                                                     fractions=True))
        if b.e_epsilon != e.e_epsilon:
            raise SystemExit(f"{name}: compiled {b.e_epsilon} != enumerated {e.e_epsilon}")
        t.add_row(name, str(n), str(b.e_epsilon), str(e.e_epsilon), "yes",
                  f"{bw:.3f} / {bc:.3f}", f"{ew:.3f} / {ec:.3f}",
                  str(b.details.get("bdd_size", "-")))
    console.print(t)


def targets(quick: bool) -> None:
    t = Table(title="Targets (backend auto)", title_justify="left")
    for col in ("run", "target", "wall s", "CPU s", "result", "backend chosen"):
        t.add_column(col)
    dnm = privet.mechanisms.get("faier.discrete_noisy_max")
    rr = privet.mechanisms.get("wmc.randomized_response")
    rrc = privet.mechanisms.get("wmc.rr_count")
    runs = [
        ("discrete noisy max, 5 queries, exact ε (Fractions)", 0.5,
         lambda: exact(dnm, length=5, fractions=True)),
        ("exhaustive RR n = 12 (float)" if not quick else "exhaustive RR n = 10 (float)",
         10.0, lambda: exact(rr, length=10 if quick else 12)),
        ("RRcount accuracy, A_RRcount, n = 1,000, α = 3 (Fractions)", 10.0,
         lambda: accuracy(rrc, 3, inputs="rr", length=1000, fractions=True, top_k=2)),
        ("RRcount accuracy, A_RRcount, n = 1,000, α = 50 (Fractions)", 10.0,
         lambda: accuracy(rrc, 50, inputs="rr", length=1000, fractions=True, top_k=2)),
    ]
    for name, target, f in runs:
        r, w, c = _timed(f)
        if hasattr(r, "e_epsilon"):
            e = r.e_epsilon
            res = f"e^ε = {round(e, 9) if isinstance(e, float) else e}"
        else:
            res = f"1 - β = {float(r.one_minus_beta):.6g} (exact)"
        mark = "ok" if w < target else "OVER"
        t.add_row(name, f"< {target:g} s", f"{w:.2f} ({mark})", f"{c:.2f}", res,
                  (r.details.get("backend_choice") or r.backend)[:90])
    console.print(t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller inputs in the comparison")
    args = ap.parse_args()
    console.print(f"load average: {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores")
    compare(args.quick)
    targets(args.quick)


if __name__ == "__main__":
    main()
