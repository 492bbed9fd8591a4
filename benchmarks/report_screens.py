"""Screenshots of every HTML report kind at 800 and 1,400 pixels, taken by headless Chromium,
with a measured check that nothing is cut off.

Runs small seeded engine runs (detect with its p-value curve on a numeric and a categorical
event, search, exact with and without Fractions, (α, β)-accuracy, pufferfish violated and
verified, synth, a suite), writes one self-contained report per kind and photographs each at
800 and 1,400 CSS pixels wide. For each page and width it also loads a copy with a short
measuring script (the reports themselves carry no script) and prints:

* ``page px``: the page's width in CSS pixels (wider than the window = cut off);
* ``overflow``: elements whose right edge passes their box (a table wider than the page,
  a badge running out of its cell) — the list must be empty;
* ``height px``: the page's height.

Skips cleanly (exit 0, one line) when no Chromium is installed (Debian: ``apt-get install
chromium``).

    .venv/bin/python benchmarks/report_screens.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out" / "screens"
WIDTHS = (800, 1400)
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--hide-scrollbars", "--force-device-scale-factor=1")

# Measures the page inside the browser: page width, and every element that sticks out of
# the page or out of a table cell (what a reader would see as cut off or overlapping).
MEASURE = """
<script>
window.addEventListener("load", () => {
  const doc = document.documentElement, width = window.innerWidth, bad = [];
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || el.closest("svg") && el.tagName.toLowerCase() !== "svg") continue;
    const cell = el.parentElement && el.parentElement.closest("td, th");
    const box = cell ? cell.getBoundingClientRect() : {right: width};
    if (r.right > box.right + 1) bad.push(el.tagName.toLowerCase() + "." +
      (el.className && el.className.baseVal === undefined ? el.className : "") + ":" +
      Math.round(r.right - box.right) + "px");
  }
  const out = document.createElement("pre");
  out.id = "privet-measure";
  out.textContent = JSON.stringify({page: doc.scrollWidth, height: doc.scrollHeight,
                                    window: width, overflow: bad.slice(0, 8)});
  document.body.appendChild(out);
});
</script>
"""


def browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def run_browser(exe: str, args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="privet-chromium-") as profile:
        return subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=timeout)


def measure(exe: str, page: Path, width: int) -> dict:
    html = page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>")
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False,
                                     encoding="utf-8") as tmp:
        tmp.write(html)
    try:
        res = run_browser(exe, [f"--window-size={width},900", "--virtual-time-budget=3000",
                                "--dump-dom", Path(tmp.name).as_uri()])
    finally:
        Path(tmp.name).unlink(missing_ok=True)
    m = re.search(r'<pre id="privet-measure">(.*?)</pre>', res.stdout, re.S)
    if not m:
        return {"error": (res.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def screenshot(exe: str, page: Path, png: Path, width: int, height: int) -> None:
    run_browser(exe, [f"--window-size={width},{height}", f"--screenshot={png}",
                      "--virtual-time-budget=3000", page.as_uri()])


def reports(quick: bool) -> dict[str, list]:
    """One list of results per report kind, from small seeded runs."""
    import numpy as np

    import privet
    from privet import mechanisms
    from privet.exact import accuracy
    from privet.synth import Grammar

    n = dict(n_select=5_000, n_final=20_000) if quick else dict(n_select=20_000,
                                                                n_final=100_000)
    get = mechanisms.get
    out: dict[str, list] = {}
    out["detect-numeric"] = [privet.detect(get("statdp.histogram_eps"), seed=1,
                                           test_epsilons=[0.4, 0.7, 1.0, 1.3, 1.6], **n)]
    out["detect-categorical"] = [privet.detect(get("statdp.isvt3"), seed=1,
                                               test_epsilons=[0.5, 0.7, 1.0, 1.5], **n)]
    out["search"] = [privet.search(get("dpfinder.noisy_max"), iterations=1 if quick else 3,
                                   seed=0)]
    out["exact"] = [privet.exact(get("wmc.randomized_response"), length=3, fractions=True),
                    privet.exact(get("faier.discrete_noisy_max"), length=2)]
    out["accuracy"] = [accuracy(get("wmc.rr_count"), 1, length=3,
                                             fractions=True)]
    out["pufferfish"] = [privet.pufferfish("ex3", "ln(2)"), privet.pufferfish("ex3", "ln(4)")]
    sizes = dict(tester="internal", n_select=4_000, n_final=8_000, m_region=5_000,
                 m_rank=6_000, verify_n=(5_000, 20_000))
    out["synth"] = [privet.synth("kolahal.histogram", seed=3, **sizes)]
    out["synth-none"] = [privet.synth("kolahal.histogram", seed=3,
                                      grammar=Grammar(coefficients=(0.25,), factors=(),
                                                      bottom=True), **sizes)]
    from privet import floats

    out["floats-porosity"] = [floats.porosity(get("floats.laplace"), [0.0], [1.0], n=500,
                                              seed=5, first=True)]
    agg = mechanisms.floats.aggregate(get("floats.int32_sum"))
    out["floats-sensitivity"] = [floats.sum_sensitivity(agg, bounds=(0, 2 ** 30), length=8,
                                                        dtype=np.int64, batched=True,
                                                        iterations=20)]
    only = ["statdp.noisy_max_v1b", "statdp.isvt3", "dpfinder.above_threshold",
            "wmc.randomized_response", "faier.discrete_noisy_max", "statdp.histogram"]
    out["suite"] = [privet.suite(only=only, quick=True, seed=0)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller samples (same pages)")
    ap.add_argument("--out", default=str(OUT), help=f"folder for pages and PNGs ({OUT})")
    ap.add_argument("--rerender", action="store_true",
                    help="render the results saved by the last run (OUT/results.json) again "
                         "instead of running the engines")
    opts = ap.parse_args()
    exe = browser()
    if exe is None:
        print("skipped: no Chromium found (apt-get install chromium); nothing to photograph")
        return 0
    from privet.core.results import from_json, to_json
    from privet.report.html import write_html

    out = Path(opts.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.perf_counter(), time.process_time()
    saved = out / "results.json"
    if opts.rerender and saved.exists():
        kinds = from_json(saved.read_text(encoding="utf-8"))
    else:
        kinds = reports(opts.quick)
        saved.write_text(to_json(kinds), encoding="utf-8")
    print(f"engines: {time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} s "
          f"CPU for {sum(map(len, kinds.values()))} results")
    print(f"{'report':<20} {'width':>5} {'page px':>8} {'height px':>9}  overflow  screenshot")
    failures = 0
    for kind, results in kinds.items():
        page = write_html(out / f"{kind}.html", results, title=f"privet report: {kind}")
        for width in WIDTHS:
            m = measure(exe, page, width)
            png = out / f"{kind}-{width}.png"
            if "error" in m:
                print(f"{kind:<20} {width:>5}  browser error: {m['error']}")
                failures += 1
                continue
            screenshot(exe, page, png, width, min(int(m["height"]) + 16, 16_000))
            cut = m["page"] > m["window"] or m["overflow"]
            failures += bool(cut)
            where = "none" if not cut else ", ".join(m["overflow"]) or "page wider than window"
            print(f"{kind:<20} {width:>5} {m['page']:>8} {m['height']:>9}  {where:<8}  "
                  f"{png.relative_to(out.parent) if png.exists() else '(none)'}")
    print(f"{failures} page(s) cut off or overflowing; pages and screenshots in {out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
