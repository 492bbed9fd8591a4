"""Audit mechanisms of real DP libraries (IBM diffprivlib, OpenDP) with privet.detect.

    /work/venv/bin/python benchmarks/real_libraries.py            # n_select 20k, n_final 100k
    /work/venv/bin/python benchmarks/real_libraries.py --quick    # n_select 5k, n_final 20k
    /work/venv/bin/python benchmarks/real_libraries.py --search   # also privet.search (black box)
    /work/venv/bin/python benchmarks/real_libraries.py --only opendp.mean_din1

For every adapter of :mod:`privet.mechanisms.libs` whose library is installed: sampling speed
(samples/s through ``Mechanism.sample``, executor chosen by kind), the detect verdict at the
library's claimed epsilon with the p-value, the counterexample (D1, D2, event) when one is
found, and the time. The audits' input pairs are ``privet.mechanisms.libs.AUDITS``. There is
no paper figure to compare with: the expected column says whether the use is sound ("pass")
or a known misuse ("violation"). At the end it prints a markdown block for the README.

diffprivlib runs are seeded (``--seed``); OpenDP draws from the OS generator and cannot be
seeded, so its p-values change from run to run.
"""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.table import Table

from privet.detect import detect
from privet.mechanisms import libs
from privet.stats.intervals import certified_lower_bound


def _fmt_p(p: float) -> str:
    return "p < 1e-16" if p < 1e-16 else f"p = {p:.3g}"


def _fmt_input(x) -> str:
    return "[" + ", ".join(f"{float(v):g}" for v in x) + "]"


def speed(mech, audit: libs.Audit, n: int, seed: int) -> float:
    x = audit.inputs[0][0] if audit.inputs else [1]
    t0 = time.perf_counter()
    mech.sample(x, n, seed=seed)
    return n / (time.perf_counter() - t0)


def run_audit(name: str, n_select: int, n_final: int, seed: int, with_search: bool,
              n_speed: int) -> dict:
    mech = libs.get(name)
    audit = libs.AUDITS[name]
    sps = speed(mech, audit, n_speed, seed)
    t0 = time.perf_counter()
    # the fixed-size test: the 95% bound below is computed from its final counts, which a
    # sequential test would stop at a data-dependent size. These audits test the claim over
    # the reals (float_features="off"); what the libraries' doubles leak is audited by
    # benchmarks/floating_point.py
    res = detect(mech, inputs=audit.inputs, n_select=n_select, n_final=n_final, seed=seed,
                 sequential=False, max_candidates=1, float_features="off")
    secs = time.perf_counter() - t0
    row = {"name": name, "source": mech.source, "claimed": mech.describe_claim(),
           "expect": audit.expect, "why": audit.why, "samples_per_s": sps,
           "verdict": res.verdict, "p": res.p_value, "violation": res.violation,
           "seconds": secs, "cex": None, "search": None, "kind": mech.kind,
           "relation": mech.neighbors.describe()}
    cx = res.counterexample if res.counterexample is not None else res.details.get("selected")
    if cx is not None and res.test_delta:
        # an (ε, δ) test: the certified δ at the tested ε from the same fresh counts (95%)
        from privet.stats.approx import delta_lower_bound

        row["cex"] = {"d1": _fmt_input(cx.d1), "d2": _fmt_input(cx.d2), "event": cx.event,
                      "counts": f"{cx.counts[0]}/{cx.n[0]} vs {cx.counts[1]}/{cx.n[1]}",
                      "found": res.counterexample is not None, "eps_lb": None,
                      "delta_lb": delta_lower_bound(cx.counts[0], cx.n[0], cx.counts[1],
                                                    cx.n[1], cx.test_epsilon, 0.95),
                      "at": cx.test_epsilon}
    elif cx is not None:
        row["cex"] = {"d1": _fmt_input(cx.d1), "d2": _fmt_input(cx.d2), "event": cx.event,
                      "counts": f"{cx.counts[0]}/{cx.n[0]} vs {cx.counts[1]}/{cx.n[1]}",
                      "found": res.counterexample is not None,
                      # fresh final-test counts: eps >= log(p1_low / p2_up), 95% confidence
                      "eps_lb": certified_lower_bound(cx.counts[0], cx.n[0], cx.counts[1],
                                                      cx.n[1], 0.95)}
    if with_search:
        from privet.search import search

        t1 = time.perf_counter()
        bound = search(mech, iterations=2, seed=seed, n_confirm=50_000,
                       float_features="off") \
            if mech.claim.kind == "pure" else search(mech, seed=seed, n_final=n_final)
        row["search"] = {"value": getattr(bound, "value", None), "confidence": bound.confidence,
                         "seconds": time.perf_counter() - t1,
                         "verdict": bound.details.get("verdict", getattr(bound, "verdict", ""))}
    return row


def markdown(rows: list[dict], n_select: int, n_final: int) -> str:
    lines = [
        "### What privet found in real libraries",
        "",
        f"`privet.detect` (StatDP) at each library's own claimed ε, {n_select:,} selection + "
        f"{n_final:,} final samples per input, fixed-size test "
        f"(`benchmarks/real_libraries.py`). "
        "\"No violation found\" is not a proof of privacy.",
        "",
        "| mechanism | library call | claim | neighbors | privet found |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        mech = libs.get(r["name"])
        if r["violation"] and r["cex"]:
            c = r["cex"]
            shows = (f"so ε ≥ {c['eps_lb']:.3g}" if c.get("eps_lb") is not None else
                     f"so δ({c['at']:.3g}) ≥ {c['delta_lb']:.3g}")
            found = (f"**violation found ({_fmt_p(r['p'])})**: D1 = {c['d1']}, "
                     f"D2 = {c['d2']}, event `{c['event']}`, counts {c['counts']}, "
                     f"{shows} (95% confidence)")
        else:
            found = f"{r['verdict']} ({_fmt_p(r['p'])})"
        lines.append(f"| `{r['name']}` | {mech.description} ({r['source']}) | "
                     f"{r['claimed']} | {r['relation']} | {found} |")
    lines += [
        "",
        "The misuses are one argument away from the sound calls: diffprivlib's "
        "`tools.mean(x, epsilon)` without `bounds` (the library warns with "
        "`PrivacyLeakWarning` and takes the bounds from the data, so on constant data the "
        "output is the exact mean); an exponential mechanism declared monotonic "
        "(diffprivlib's `Exponential(monotonic=True)`, OpenDP's "
        "`linf_distance(monotonic=True)`) on scores that move in opposite directions, as "
        "counts by category do when one record changes; and OpenDP's sized mean whose ε is "
        "read off `map(1)`: replacing one record of a sized dataset is symmetric distance 2, "
        "and `map(1)` comes out near 0.",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="n_select 5,000 and n_final 20,000")
    ap.add_argument("--search", action="store_true",
                    help="also run privet.search (black-box mode) on the diffprivlib adapters")
    ap.add_argument("--only", nargs="*", default=None, help="adapter names to audit")
    ap.add_argument("--seed", type=int, default=0)
    opts = ap.parse_args()
    n_select, n_final = (5_000, 20_000) if opts.quick else (20_000, 100_000)
    n_speed = 5_000 if opts.quick else 20_000
    installed = libs.real_libraries()
    for lib in libs.LIBRARIES:
        print(f"{lib}: " + (libs.version(lib) if libs.available(lib) else "not installed"))
    names = [n for n in libs.NAMES if n in installed and (not opts.only or n in opts.only)]
    console = Console(width=200)
    rows = []
    for name in names:
        with_search = opts.search and name.startswith("diffprivlib.")
        row = run_audit(name, n_select, n_final, opts.seed, with_search, n_speed)
        rows.append(row)
        console.print(f"{name}: {row['verdict']} ({row['seconds']:.1f} s)")
    table = Table(title=f"privet.detect on real libraries (n_select {n_select:,}, n_final "
                        f"{n_final:,}; seed {opts.seed}; 2 shared cores, timings noisy)")
    for col in ("mechanism", "kind", "samples/s", "claimed ε", "known ε", "expected", "verdict",
                "p", "counterexample (D1, D2, event)", "ε ≥ (95%)", "time s"):
        table.add_column(col)
    for r in rows:
        c = r["cex"]
        found = bool(c and c["found"])
        cx = f"{c['d1']} {c['d2']} {c['event']}" if found else "-"
        known = libs.get(r["name"]).true_epsilon
        table.add_row(r["name"], r["kind"], f"{r['samples_per_s']:,.0f}", str(r['claimed']),
                      "-" if known is None else f"{known:.4g}", r["expect"], r["verdict"],
                      f"{r['p']:.3g}", cx,
                      (f"{c['eps_lb']:.3g}" if c.get("eps_lb") is not None else
                       f"δ ≥ {c['delta_lb']:.3g}") if found else "-",
                      f"{r['seconds']:.1f}")
    console.print(table)
    agree = sum((r["expect"] == "violation") == r["violation"] for r in rows)
    print(f"verdicts as expected: {agree}/{len(rows)}")
    if any(r["search"] for r in rows):
        st = Table(title="privet.search (black-box mode: independent samples, no Replay)")
        for col in ("mechanism", "claimed ε", "ε ≥ (conf.)", "verdict", "time s"):
            st.add_column(col)
        for r in rows:
            if r["search"]:
                s = r["search"]
                value = "—" if s["value"] is None else f"{s['value']:.3g}"
                st.add_row(r["name"], str(r["claimed"]),
                           f"{value} ({s['confidence']:.2f})", s["verdict"],
                           f"{s['seconds']:.1f}")
        console.print(st)
    print()
    print(markdown(rows, n_select, n_final))


if __name__ == "__main__":
    main()
