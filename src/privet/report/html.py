"""Self-contained HTML reports: one file per run, inline CSS and inline SVG plots, no network.

``to_html(obj)`` renders any privet result as an HTML fragment (lists render one after the
other; anything else becomes an escaped ``repr``); ``page(title, body)`` wraps fragments in a
complete HTML5 document with a header and a "how to read this report" legend;
``write_html(path, objs, title)`` writes one. ``repr_html(obj)`` is the notebook form
(``_repr_html_`` of every result type): the fragment with its style sheet.

Plots are drawn with matplotlib on a bare :class:`matplotlib.figure.Figure` (no pyplot, so a
notebook's backend is left alone), saved as SVG into a string and inlined; without matplotlib
a one-line note replaces each plot. The figures follow the papers:

* p-value curves as in StatDP Fig. 1 (x = test ε, y = p-value, claimed ε dashed, α dotted);
* the event's statistic under D1 and D2 (histograms recorded by ``privet.detect`` in
  ``Counterexample.details["histograms"]``), the event's region shaded;
* ε bounds per mechanism: certified lower bound (DP-Finder), exact ε (WMC), claimed ε and
  the literature's known ε;
* exact output distributions of an ExactBound's witness pair as tables (p/q and decimal).

Every string that can come from a user (names, events, arguments, verdicts, details) goes
through :func:`html.escape`; SVG text is escaped by matplotlib's writer.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import html
import io
import itertools
import math
import re
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..core.results import VERDICTS, interrupted, to_json, verdict_tone
from ..core.text import fmt_num, fmt_pvalue, fmt_value, fmt_vec, pct

MAX_ROWS = 50
MAX_DETAILS_CHARS = 20_000

CSS = """
.privet{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
 color:#1d232b;line-height:1.4;font-size:14px}
.privet h1{font-size:1.5em;margin:.2em 0}.privet h2{font-size:1.25em;margin:1.2em 0 .4em}
.privet h3{font-size:1.08em;margin:1em 0 .3em}.privet h4{font-size:1em;margin:.8em 0 .2em}
.privet table{border-collapse:collapse;margin:.4em 0 .8em;font-size:.93em}
.privet th,.privet td{border:1px solid #d5dae1;padding:3px 8px;text-align:left;
 vertical-align:top}
.privet th{background:#eef1f5;font-weight:600}
.privet td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.privet table.kv th{width:11em;background:#f6f7f9}
.privet code,.privet pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
 font-size:.92em}
.privet pre{background:#f6f7f9;border:1px solid #e1e5ea;padding:.5em;overflow:auto;
 max-height:30em}
.privet .verdict{display:inline-block;padding:1px 8px;border-radius:4px;font-weight:600}
.privet .bad{background:#fde2e1;color:#a11a14}.privet .good{background:#dcf3e2;color:#14632c}
.privet .neutral{background:#eceef1;color:#4a525c}.privet .warn{background:#fff1d0;
 color:#7a5300}
.privet tr.hl td{background:#fff7d6}
.privet .result{border-left:3px solid #c9d1db;padding:.1em 0 .1em .8em;margin:.8em 0}
.privet .note{color:#5b6470;font-size:.92em}
.privet details{margin:.3em 0}.privet summary{cursor:pointer}
.privet .legend{background:#f6f7f9;border:1px solid #e1e5ea;padding:.4em 1em;
 margin:.6em 0 1.2em}
.privet .plot svg{max-width:100%;height:auto}
.privet .plot svg text{font-family:"DejaVu Sans",Verdana,Arial,Helvetica,sans-serif}
.privet .meta{color:#5b6470}
.privet .wide{max-width:100%;overflow-x:auto}
"""


# --------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------

def esc(value: Any) -> str:
    """Escape anything for HTML text or attribute values (quotes included)."""
    return html.escape(str(value), quote=True)


def _num(v: Any, digits: int = 4) -> str:
    return esc(fmt_num(v, digits))


def _vec(x: Any) -> str:
    """A vector in full (6 digits, integers as integers), escaped."""
    return esc(fmt_vec(x, 6))


def _p(p: float | None) -> str:
    return "—" if p is None else esc(fmt_pvalue(p))


def _seed(seed: Any) -> str:
    """The seed that replays a run; results saved before seeds were always recorded may
    lack one."""
    return esc(seed) if seed is not None else '<span class="note">not recorded</span>'


def verdict_class(text: str) -> str:
    """CSS class of a verdict, from the table of verdict words in ``core.results``:
    violations red (``bad``), proofs green (``good``), nothing found grey, else amber."""
    return verdict_tone(text)


def badge(text: str, cls: str | None = None) -> str:
    return f'<span class="verdict {cls or verdict_class(text)}">{esc(text)}</span>'


def kv_table(rows: Iterable[tuple[str, str]]) -> str:
    """A two-column table; keys are escaped here, values must already be HTML."""
    body = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="kv">{body}</table>'


def grid_table(headers: Sequence[str], rows: Iterable[Sequence[str]],
               numeric: Sequence[int] = (), highlight: Sequence[int] = ()) -> str:
    """A table; headers are escaped here, cells must already be HTML."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    out = []
    for i, r in enumerate(rows):
        cells = "".join(f'<td class="num">{c}</td>' if j in numeric else f"<td>{c}</td>"
                        for j, c in enumerate(r))
        cls = ' class="hl"' if i in highlight else ""
        out.append(f"<tr{cls}>{cells}</tr>")
    # a table wider than a narrow window scrolls inside its box instead of being cut off
    return (f'<div class="wide"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(out)}</tbody></table></div>")


def name_cell(name: str) -> str:
    """A mechanism name that may wrap after its dots and underscores (``faier.<wbr>…``)."""
    return re.sub(r"([._])", r"\1<wbr>", esc(name))


def _details_block(details: dict, skip: Sequence[str] = ()) -> str:
    """Every detail as escaped JSON in a collapsed block."""
    data = {k: v for k, v in (details or {}).items() if k not in skip}
    if not data:
        return ""
    try:
        text = to_json(data)
    except Exception:  # pragma: no cover - exotic values
        text = repr(data)
    if len(text) > MAX_DETAILS_CHARS:
        text = text[:MAX_DETAILS_CHARS] + "\n… (truncated; --json prints everything)"
    return f"<details><summary>all details</summary><pre>{esc(text)}</pre></details>"


def _notes(details: dict | None) -> str:
    """A result's notes (how its run went: a seed that cannot replay it, narrowed events)
    as lines of their own, above the collapsed details."""
    return "".join(f"<p class='note'>note: {esc(n)}</p>"
                   for n in (details or {}).get("notes") or ())


def _known_epsilon(name: str, claimed: float | None) -> float | None:
    """The literature's ε of a library mechanism (None for others or when unknown)."""
    try:
        from .. import mechanisms

        if name not in mechanisms.all():  # a user's mechanism that shares a library name
            return None
        return mechanisms.known_epsilon(name, claimed)
    except Exception:
        return None


# --------------------------------------------------------------------------------------------
# plots (matplotlib, inline SVG)
# --------------------------------------------------------------------------------------------

_FIG_COUNTER = itertools.count(1)
_RC = {"svg.fonttype": "none", "text.parse_math": False, "svg.hashsalt": "privet",
       "font.size": 9, "axes.titlesize": 10}
D1_COLOR, D2_COLOR, EVENT_COLOR = "#1f77b4", "#ff7f0e", "#f2c14e"


def _plot(draw: Callable[[Any], None], size: tuple[float, float] = (6.4, 3.6),
          layout: str | None = None) -> str:
    """Run ``draw(fig)`` on a fresh Figure and return inline SVG (or a one-line note);
    ``layout="constrained"`` makes room for legends placed outside the axes."""
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        return '<p class="note">(plot omitted: matplotlib is not installed)</p>'
    try:
        with matplotlib.rc_context(_RC):
            fig = Figure(figsize=size, layout=layout)
            draw(fig)
            buf = io.StringIO()
            fig.savefig(buf, format="svg", bbox_inches="tight",
                        metadata={"Creator": None, "Date": None, "Format": None,
                                  "Type": None})
    except Exception as err:  # a plot never breaks a report
        return f'<p class="note">(plot omitted: {esc(type(err).__name__)}: {esc(err)})</p>'
    return f'<div class="plot">{_clean_svg(buf.getvalue())}</div>'


def _clean_svg(svg: str) -> str:
    """Inline-ready SVG: no XML prolog/doctype/metadata, no namespace URLs, unique ids."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = re.sub(r"font-family: [^;\"]*(; |;|(?=\"))", "", svg)   # the page's font instead
    ids = re.findall(r'\bid="([^"]+)"', svg)
    if ids:
        prefix = f"pv{next(_FIG_COUNTER)}-"
        pattern = re.compile(r'(\bid="|#)(' + "|".join(map(re.escape, ids)) + r')(?=["\)])')
        svg = pattern.sub(lambda m: m.group(1) + prefix + m.group(2), svg)
    return svg


def plot_pvalue_curves(curves: Sequence[Any], labels: Sequence[str] | None = None,
                       title: str | None = None) -> str:
    """StatDP Fig. 1: p-value against test ε, claimed ε dashed, α dotted (inline SVG)."""
    items = [c for c in curves if c is not None and len(c.test_epsilons)]
    if not items:
        return ""

    def draw(fig):
        ax = fig.add_subplot()
        for i, c in enumerate(items):
            label = labels[i] if labels else (
                f"{c.mechanism} (claimed ε = {_fmt(c.claimed_epsilon)})" if len(items) > 1
                else f"claimed ε = {_fmt(c.claimed_epsilon)}")
            line, = ax.plot(list(c.test_epsilons), list(c.p_values), marker="o", ms=3,
                            label=label)
            if c.claimed_epsilon is not None:
                ax.axvline(c.claimed_epsilon, color=line.get_color(), ls="--", lw=1)
        alpha = items[0].alpha
        ax.axhline(alpha, color="grey", ls=":", lw=1, label=f"α = {alpha:g}")
        ax.set_xlabel("test ε")
        ax.set_ylabel("p-value")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(title or (items[0].mechanism if len(items) == 1 else "p-value curves"))
        fig.legend(loc="outside lower center", fontsize=8, frameon=False,
                   ncols=min(3, len(items) + 1))

    return _plot(draw, layout="constrained")


def _fmt(v: Any) -> str:
    return fmt_num(v, 4)


def plot_histograms(h: dict, d1: Any = None, d2: Any = None) -> str:
    """The event's statistic under D1 and D2 (``Counterexample.details["histograms"]``)."""
    n1, n2 = (max(int(v), 1) for v in h.get("n", (1, 1)))
    c1, c2 = h.get("d1") or [], h.get("d2") or []
    if not c1:
        return '<p class="note">(no finite value of the statistic to plot)</p>'
    e1, e2 = h.get("event_counts", (None, None))
    lab1 = f"D1 = {_short(d1)}: {e1:,} of {n1:,} plotted samples in E" if e1 is not None \
        else f"D1 = {_short(d1)}"
    lab2 = f"D2 = {_short(d2)}: {e2:,} of {n2:,} plotted samples in E" if e2 is not None \
        else f"D2 = {_short(d2)}"
    stat = str(h.get("statistic", "statistic"))
    cond = h.get("condition")
    inside = list(h.get("in_event") or [False] * len(c1))
    labels = list(h.get("labels") or [str(i) for i in range(len(c1))])
    if h.get("kind") != "numeric":  # categories in their natural order (0, 1, 2, …)
        order = sorted(range(len(c1)), key=lambda i: _category_key(labels[i]))
        c1, c2 = [c1[i] for i in order], [c2[i] for i in order]
        inside, labels = [inside[i] for i in order], [labels[i] for i in order]

    def draw(fig):
        ax = fig.add_subplot()
        f1 = [c / n1 for c in c1]
        f2 = [c / n2 for c in c2]
        if h.get("kind") == "numeric":
            edges = h["edges"]
            ax.stairs(f1, edges, fill=True, alpha=0.45, color=D1_COLOR, label=lab1)
            ax.stairs(f2, edges, fill=True, alpha=0.45, color=D2_COLOR, label=lab2)
            lo = h.get("event_low")
            hi = h.get("event_high")
            left = edges[0] if lo is None else max(lo, edges[0])
            right = edges[-1] if hi is None else min(hi, edges[-1])
            if right > left:
                ax.axvspan(left, right, color=EVENT_COLOR, alpha=0.25, zorder=0,
                           label="event E")
            ax.set_xlabel(stat + (f"  (given {cond})" if cond else ""))
        else:
            xs = list(range(len(c1)))
            for x, ins in zip(xs, inside):
                if ins:
                    ax.axvspan(x - 0.5, x + 0.5, color=EVENT_COLOR, alpha=0.3, zorder=0)
            ax.bar([x - 0.2 for x in xs], f1, width=0.4, color=D1_COLOR, label=lab1)
            ax.bar([x + 0.2 for x in xs], f2, width=0.4, color=D2_COLOR, label=lab2)
            if any(inside):
                ax.bar([0], [0], color=EVENT_COLOR, alpha=0.3, label="event E")
            ax.set_xticks(xs)
            ax.set_xticklabels(labels, rotation=45 if len(xs) > 12 else 0, fontsize=7)
            ax.set_xlabel(stat)
        ax.set_ylabel("fraction of samples")
        ax.set_title(f"E: {h.get('event', '')}", fontsize=9)
        # below the plot, never over the bars or the shaded event
        fig.legend(loc="outside lower center", fontsize=7, frameon=False)

    return _plot(draw, layout="constrained")


def _category_key(label: str) -> tuple:
    """Sort key of a category label: numbers (and lists of numbers) by value, then text."""
    try:
        return (0, tuple(float(t) for t in label.strip("[]").split(",")))
    except ValueError:
        return (1, (), label)


def _short(x: Any, limit: int = 40) -> str:
    if x is None:
        return "?"
    text = html.unescape(_vec(list(x) if isinstance(x, tuple) else x))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def plot_epsilon_bounds(items: Sequence[dict], title: str = "ε bounds") -> str:
    """Per mechanism: certified lower bound (with confidence), exact, claimed and known ε.

    ``items``: dicts with ``name`` and any of ``lower``, ``confidence``, ``exact``,
    ``claimed``, ``known`` (floats; inf is drawn at the right edge, marked ∞). The ε axis is
    logarithmic when the values span more than a factor of 20 (a library mixes ε = 0.1
    and unbounded violations).
    """
    keys = ("lower", "exact", "claimed", "known")
    items = [it for it in items if any(_finite_or_inf(it.get(k)) is not None for k in keys)]
    if not items:
        return ""
    vals = [v for it in items for k in keys
            if (v := _finite_or_inf(it.get(k))) is not None and math.isfinite(v) and v > 0]
    hi = max(vals) if vals else 1.0
    lo_val = min(vals) if vals else 1.0
    log = hi / lo_val > 20
    top = hi * (2.0 if log else 1.15)
    left = lo_val / 2 if log else 0.0
    confs = {round(float(c), 6) for it in items if (c := it.get("confidence")) is not None
             and _finite_or_inf(it.get("lower")) is not None}
    one_conf = len(confs) == 1

    def clip(v):
        v = _finite_or_inf(v)
        if v is None:
            return None
        return top if not math.isfinite(v) else max(v, left)

    def draw(fig):
        ax = fig.add_subplot()
        if log:
            from matplotlib.ticker import FuncFormatter, NullFormatter

            ax.set_xscale("log")   # plain tick labels (mathtext is off for user strings)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
        names = [str(it["name"]) for it in items]
        ys = list(range(len(items)))[::-1]
        seen: set = set()

        def mark(x, y, label, **kw):
            ax.plot([x], [y], linestyle="none", label=None if label in seen else label, **kw)
            seen.add(label)

        lab = "certified lower bound" + (f" ({next(iter(confs)):.0%} confidence)"
                                         if one_conf else "")
        for y, it in zip(ys, items):
            lo = clip(it.get("lower"))
            if lo is not None:
                ax.hlines(y, left, lo, colors="#9ecae1", lw=6,
                          label=None if lab in seen else lab)
                seen.add(lab)
                conf = it.get("confidence")
                if conf is not None and not one_conf:
                    ax.annotate(f"{conf:.0%}", (lo, y), xytext=(-2, 5), ha="right",
                                textcoords="offset points", fontsize=7, color="#31708f")
            if (v := clip(it.get("claimed"))) is not None:
                mark(v, y, "claimed ε", marker="|", color="black", ms=16, mew=2)
            if (v := clip(it.get("known"))) is not None:
                mark(v, y, "known ε", marker="x", color="#d62728", ms=7, mew=2)
            if (v := clip(it.get("exact"))) is not None:
                mark(v, y, "exact ε", marker="D", mfc="none", mec="#2ca02c", mew=1.5, ms=9)
            if any((v := _finite_or_inf(it.get(k))) is not None and not math.isfinite(v)
                   for k in ("lower", "exact", "known")):
                ax.annotate("∞", (top, y), xytext=(5, -3), textcoords="offset points",
                            fontsize=9)
        ax.set_yticks(ys)
        ax.set_yticklabels(names, fontsize=8)
        ax.set_xlim(left, top * (1.3 if log else 1.05))
        ax.set_ylim(-0.7, len(items) - 0.3)
        ax.set_xlabel("ε (log scale)" if log else "ε")
        ax.grid(axis="x", color="#e3e6ea", lw=0.6)
        ax.set_axisbelow(True)
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)

    return _plot(draw, size=(6.4, 1.2 + 0.32 * len(items)))


def _finite_or_inf(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------------------------
# renderers, one per result type
# --------------------------------------------------------------------------------------------

def _section(body: str, cls: str = "result") -> str:
    return f'<div class="{cls}">{body}</div>'


def render_counterexample(cx: Any, title: str = "counterexample") -> str:
    """D1, D2, arguments, event, counts or probabilities, ε witnessed, seed; histograms."""
    rows = [("mechanism", esc(cx.mechanism)), ("D1", _vec(cx.d1)), ("D2", _vec(cx.d2))]
    if cx.args:
        rows.append(("arguments", esc(", ".join(f"{k}={v}" for k, v in cx.args.items()))))
    rows.append(("event E", f"<code>{esc(cx.event)}</code>"))
    if cx.counts and cx.n:
        rows.append(("M(D1) ∈ E", f"{int(cx.counts[0]):,} / {int(cx.n[0]):,}"))
        rows.append(("M(D2) ∈ E", f"{int(cx.counts[1]):,} / {int(cx.n[1]):,}"))
    if cx.probabilities:
        rows.append(("P[M(D1) ∈ E]", _prob_cell(cx.probabilities[0])))
        rows.append(("P[M(D2) ∈ E]", _prob_cell(cx.probabilities[1])))
    if cx.test_epsilon is not None:
        d = (cx.details or {}).get("test_delta")
        rows.append(("claim tested", esc(f"P(M(D1) ∈ E) ≤ e^{cx.test_epsilon:g} "
                                          "P(M(D2) ∈ E)" + (f" + {d:.3g}" if d else ""))))
    if cx.p_value is not None:
        rows.append(("p-value", _p(cx.p_value)))
    if cx.epsilon_witnessed is not None:
        how = "exact" if cx.exact else (f"confidence {pct(cx.confidence)}"
                                        if cx.confidence is not None else "")
        rows.append(("ε witnessed", f"{_num(cx.epsilon_witnessed)} ({esc(how)})"))
    pattern = (cx.details or {}).get("pattern")
    if pattern:
        rows.append(("input pattern", esc(pattern)))
    if cx.seed is not None:
        rows.append(("seed", esc(cx.seed)))
    out = [f"<h4>{esc(title)}</h4>", kv_table(rows)]
    h = (cx.details or {}).get("histograms")
    if isinstance(h, dict) and h.get("d1") is not None:
        out.append(plot_histograms(h, cx.d1, cx.d2))
        out.append(_histogram_note(h, cx))
    out.append(_details_block(cx.details, skip=("histograms",)))
    return "".join(out)


def _histogram_note(h: dict, cx: Any = None) -> str:
    """What the plot shows, and why its counts may differ from the table's."""
    n = int((h.get("n") or [0])[0])
    bits = []
    if cx is not None and cx.n and n and int(cx.n[0]) != n:
        bits.append(f"the counts in the table above come from the test's own "
                    f"{int(cx.n[0]):,} samples per input")
    for key, what in (("below", "below the plotted range"), ("above", "above it"),
                      ("nonfinite", "with no finite value"),
                      ("outside", "not meeting the condition")):
        v = h.get(key)
        if v and any(v):
            bits.append(f"{what}: {int(v[0]):,} / {int(v[1]):,}")
    text = "; ".join([f"plotted: statistic {h.get('statistic', '')}, {h.get('source', '')}"
                      + (f" ({n:,} per input)" if n else ""), *bits])
    return f'<p class="note">{esc(text)}.</p>'


def _prob_cell(v: Any) -> str:
    f = _to_fraction(v)
    if f is not None and f.denominator != 1:
        return f"{esc(_frac_text(f))} ≈ {esc(fmt_num(float(f), 6))}"
    return _num(f if f is not None else v, 6)


def _to_fraction(v: Any) -> Fraction | None:
    if isinstance(v, Fraction):
        return v
    if isinstance(v, str) and re.fullmatch(r"-?\d+(/\d+)?", v.strip()):
        return Fraction(v.strip())
    return None


def _frac_text(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def render_pvalue_curve(curve: Any, plot: bool = True) -> str:
    """StatDP Fig. 1 plot and the table of test ε, p-value and selected event."""
    lb = curve.lower_bound
    head = (f"<h4>p-value curve of {esc(curve.mechanism)} (claimed ε = "
            f"{_num(curve.claimed_epsilon)}, α = {esc(f'{curve.alpha:g}')})</h4>")
    summary = (f"<p>statistical lower bound: ε &gt; {_num(lb)} (largest test ε rejected at "
               f"α = {esc(f'{curve.alpha:g}')})</p>" if lb is not None else
               "<p>no test ε rejected: no lower bound on ε</p>")
    cxs = list(curve.counterexamples) or [None] * len(curve.test_epsilons)
    rows = []
    for e, p, cx in zip(curve.test_epsilons, curve.p_values, cxs):
        cell = _p(p)
        if p < curve.alpha:
            cell = f'<span class="verdict bad">{cell}</span>'
        rows.append([_num(e, 3), cell, esc(cx.event) if cx is not None else "",
                     f"{_vec(cx.d1)} / {_vec(cx.d2)}" if cx is not None else ""])
    table = grid_table(["test ε", "p-value", "event", "D1 / D2"], rows, numeric=(0, 1))
    verdict = f"<p>{badge(curve.verdict)}</p>" if curve.verdict else ""
    return head + verdict + (plot_pvalue_curves([curve]) if plot else "") + summary + table


def render_detect(res: Any) -> str:
    """``privet.detect`` result: verdict, counterexample (histograms), candidates, curve."""
    out = [f"<h3>detect: {esc(res.mechanism)}</h3>",
           f"<p>{badge(res.verdict)}</p>",
           kv_table([
               ("test ε", _num(res.test_epsilon)),
               *([("test δ", _num(res.test_delta))] if getattr(res, "test_delta", None)
                 else []),
               ("claim", esc(getattr(res, "claim", None) or _num(res.claimed_epsilon))),
               ("known ε", _num(_known_epsilon(res.mechanism, res.claimed_epsilon))),
               ("p-value", _p(res.p_value)), ("α", esc(f"{res.alpha:g}")),
               ("arguments found by", esc(res.arg_path)),
               ("final test", esc((res.details or {}).get("design", "fixed size"))),
               ("stopped", esc((res.details or {}).get("stopped", "—"))),
               ("samples drawn", _num((res.details or {}).get("samples"))),
               ("seed", _seed(res.seed)), ("seconds", _num(res.seconds, 3)),
           ])]
    selected = res.counterexample or (res.details or {}).get("selected")
    if selected is not None and hasattr(selected, "d1"):
        out.append(render_counterexample(
            selected, "counterexample" if res.counterexample is not None else
            "most suspicious event (not significant)"))
    if len(res.candidates) > 1:
        rows = [[_vec(c.d1), _vec(c.d2), esc(c.event),
                 f"{int(c.counts[0]):,} vs {int(c.counts[1]):,}" if c.counts else "",
                 f"{int(c.n[0]):,}" if c.n else "", _p(c.p_value)] for c in res.candidates]
        out.append("<h4>candidates (best event of the best input pairs, fresh samples)</h4>")
        out.append(grid_table(["D1", "D2", "event", "counts", "runs each", "p-value"], rows,
                              numeric=(4, 5)))
    if res.curve is not None:
        out.append(render_pvalue_curve(res.curve))
    out.append(_notes(res.details))
    out.append(_details_block(res.details, skip=("selected",)))
    return _section("".join(out))


def render_bound(b: Any) -> str:
    """A (certified) lower bound on ε, its witness and the ε chart."""
    known = _known_epsilon(b.mechanism, b.claimed_epsilon)
    verdict = b.describe()
    cls = "bad" if (b.claimed_epsilon is not None and b.value > b.claimed_epsilon) else \
        "neutral"
    out = [f"<h3>lower bound on ε: {esc(b.mechanism)}</h3>", f"<p>{badge(verdict, cls)}</p>",
           kv_table([
               ("ε ≥", _num(b.value)),
               ("confidence", "exact" if b.exact else esc(f"{b.confidence:.10g}")),
               ("method", esc(b.method)), ("claimed ε", _num(b.claimed_epsilon)),
               ("known ε", _num(known)), ("seed", _seed(b.seed)),
               ("seconds", _num(b.seconds, 3)),
           ]),
           plot_epsilon_bounds([{"name": b.mechanism, "lower": b.value,
                                 "confidence": None if b.exact else b.confidence,
                                 "exact": b.value if b.exact else None,
                                 "claimed": b.claimed_epsilon, "known": known}],
                               title=f"ε bounds of {b.mechanism}")]
    if b.witness is not None:
        out.append(render_counterexample(b.witness, "witness"))
    out.append(_notes(b.details))
    out.append(_details_block(b.details, skip=("verdict",)))
    return _section("".join(out))


def render_exact(e: Any) -> str:
    """Tight ε of a discrete mechanism, its witness and the witness pair's distributions."""
    claimed = e.claimed_epsilon
    verdict = e.describe()
    if (e.details or {}).get("interrupted"):
        cls = "warn"
    elif e.delta is not None or claimed is None:
        cls = "neutral"
    else:
        cls = "good" if e.verified else "bad"
    x, x2, y = (list(e.witness) + [None, None, None])[:3]
    known = _known_epsilon(e.mechanism, claimed)
    e_eps = e.e_epsilon
    out = [f"<h3>exact: {esc(e.mechanism)}</h3>", f"<p>{badge(verdict, cls)}</p>",
           kv_table([
               ("ε", _num(e.epsilon, 6)),
               ("e^ε", _prob_cell(e_eps) if isinstance(e_eps, Fraction) else _num(e_eps, 6)),
               ("closed form", esc((e.details or {}).get("closed_form", "—"))
                if isinstance(e_eps, Fraction) else
                '<span class="note">exact p/q with --fractions (fractions=True)</span>'),
               ("claimed ε", _num(claimed)), ("known ε", _num(known)),
               ("worst case", f"D1 = {_vec(x)}, D2 = {_vec(x2)}, output {_vec(y)}"),
               ("checked domain", esc(e.domain)),
               ("backend", esc(e.details.get("backend_choice") or e.backend)),
               ("seconds", _num(e.seconds, 3)),
           ])]
    if e.delta is None:
        out.append(plot_epsilon_bounds([{"name": e.mechanism, "exact": e.epsilon,
                                         "claimed": claimed, "known": known}],
                                       title=f"ε of {e.mechanism}"))
    dists = (e.details or {}).get("distributions")
    if isinstance(dists, dict) and dists.get("rows"):
        out.append(distribution_table(dists, x, x2))
    out.append(_details_block(e.details, skip=("distributions",)))
    return _section("".join(out))


def distribution_table(dists: dict, x: Any = None, x2: Any = None,
                       max_rows: int = MAX_ROWS) -> str:
    """Exact output distributions of the witness pair: output, P under D1 and D2 (p/q and
    decimal), their ratio; the witness output highlighted; sorted, top ``max_rows`` rows."""
    rows = list(dists["rows"])[:max_rows]
    wy = dists.get("witness_output")
    fractions = any(_to_fraction(p) is not None for _, p1, p2 in rows for p in (p1, p2))
    body, hl = [], []
    for i, (y, p1, p2) in enumerate(rows):
        f1, f2 = _to_fraction(p1), _to_fraction(p2)
        v1 = float(f1) if f1 is not None else float(p1)
        v2 = float(f2) if f2 is not None else float(p2)
        if v2 == 0:
            ratio = "∞" if v1 > 0 else "—"
        elif f1 is not None and f2 is not None:
            ratio = _frac_text(f1 / f2)
        else:
            ratio = fmt_num(v1 / v2, 6)
        exact_cells = [esc(_frac_text(f)) if f is not None else "" for f in (f1, f2)]
        approx = [esc(fmt_num(v, 6)) for v in (v1, v2)]
        cells = [exact_cells[0], approx[0], exact_cells[1], approx[1]] if fractions \
            else approx
        body.append([_vec(y), *cells, esc(ratio)])
        if y == wy:
            hl.append(i)
    support = dists.get("support") or ["?", "?"]
    mass = dists.get("shown_mass")
    note = (f"{len(rows)} of the outputs (support: {support[0]} under D1, {support[1]} under "
            f"D2), sorted by P under D1 then D2")
    if mass:
        note += f"; mass shown {mass[0]:.4g} / {mass[1]:.4g}"
    note += "; the witness output is highlighted."
    if not fractions:
        note += " Exact p/q probabilities: run with --fractions (fractions=True)."
    headers = (["output", "P[M(D1) = output]", "≈", "P[M(D2) = output]", "≈", "ratio"]
               if fractions else ["output", "P[M(D1) = output]", "P[M(D2) = output]",
                                  "ratio"])
    return (f"<h4>exact output distributions of D1 = {_vec(x)} and D2 = {_vec(x2)}</h4>"
            + grid_table(headers, body, numeric=tuple(range(1, len(headers))), highlight=hl)
            + f'<p class="note">{esc(note)}</p>')


def render_accuracy(a: Any) -> str:
    """Tight (α, β)-accuracy and the worst inputs (WMC Table IV)."""
    omb = a.one_minus_beta
    out = [f"<h3>accuracy: {esc(a.mechanism)}</h3>",
           f"<p>{badge(f'P(|M(x) − f(x)| ≤ {a.alpha:g}) ≥ {_fmt(omb)} on the checked domain', 'neutral')}</p>",  # noqa: E501
           kv_table([("α", esc(f"{a.alpha:g}")),
                     ("1 − β", _prob_cell(omb) if isinstance(omb, Fraction) else _num(omb, 6)),
                     ("worst input", _vec(list(a.worst_input))),
                     ("checked domain", esc(a.domain)),
                     ("backend", esc(a.details.get("backend_choice") or a.backend)),
                     ("seconds", _num(a.seconds, 3))])]
    if a.top_k:
        rows = [[_vec(list(x)), _prob_cell(v) if isinstance(v, Fraction) else _num(v, 6)]
                for x, v in a.top_k]
        out.append("<h4>worst inputs</h4>" + grid_table(["input x", "1 − β_x"], rows,
                                                         numeric=(1,)))
    out.append(_details_block(a.details))
    return _section("".join(out))


def render_pufferfish(v: Any) -> str:
    """A Pufferfish/DP verdict on an HMM scenario (FAIER)."""
    cls = {"verified": "good", "violated": "bad"}.get(v.status, "warn")
    try:
        text = v.describe()
    except Exception:  # pragma: no cover
        text = v.status
    rows = [("status", f"<code>{esc(v.status)}</code>"),
            ("ε", esc(v.epsilon_text or f"{v.epsilon:g}")),
            ("sequence length k", esc(v.k)), ("solver", esc(v.solver))]
    if v.counterexample is not None:
        rows.append(("observation sequence",
                     esc(" ".join(fmt_value(o) for o in v.counterexample))))
    if v.pair is not None:
        rows.append(("secret pair", esc(" vs ".join(map(str, v.pair)))))
    if v.parameters:
        rows.append(("parameters", esc(", ".join(f"{k} = {fmt_num(x)}" for k, x in
                                                 v.parameters.items()))))
    if v.probabilities:
        rows.append(("probabilities", " vs ".join(_prob_cell(p) for p in v.probabilities)))
    if v.ratio is not None:
        rows.append(("probability ratio", _prob_cell(v.ratio) if isinstance(v.ratio, Fraction)
                     else _num(v.ratio, 6)))
    if v.message:
        rows.append(("message", esc(v.message)))
    rows.append(("seconds", _num(v.seconds, 3)))
    out = [f"<h3>pufferfish: {esc(v.scenario)}</h3>", f"<p>{badge(text, cls)}</p>",
           kv_table(rows), _details_block(v.details)]
    return _section("".join(out))


def render_completion(c: Any) -> str:
    """One completion of a sketch (KOLAHAL Sec. IV.D)."""
    rows = [("expressions", f"<code>{esc(c.describe())}</code>"),
            ("verdict", badge(c.verdict)), ("rank", esc(c.rank)),
            ("preliminary rank", esc(c.preliminary_rank)), ("method", esc(c.method)),
            ("p-value", _p(c.p_value)), ("exact ε", _num(c.exact_epsilon)),
            ("tightness", _num(c.tightness)), ("magnitude", _num(c.magnitude))]
    out = [kv_table(rows)]
    if c.counterexample is not None:
        out.append(render_counterexample(c.counterexample, "rejecting counterexample"))
    out.append(_details_block(c.details))
    return _section("".join(out))


def render_synth(s: Any) -> str:
    """Ranked completions of a sketch, phase times, the textbook answer's rank."""
    cls = "good" if s.status == "found" else "neutral"
    out = [f"<h3>synth: {esc(s.sketch)}</h3>", f"<p>{badge(s.status, cls)}</p>",
           kv_table([("holes", esc(", ".join(map(str, s.holes)))),
                     ("families", esc(", ".join(map(str, s.families)))),
                     ("target ε", _num(s.epsilon)), ("grammar", esc(s.grammar)),
                     ("candidates", esc(s.n_candidates)), ("grammar size", esc(s.grammar_size)),
                     ("textbook answer", esc(", ".join(map(str, s.textbook)))),
                     ("textbook rank", esc(s.textbook_rank)),
                     ("phase times (s)", esc(", ".join(f"{k} {float(v):.2f}" for k, v in
                                                      (s.times or {}).items()))),
                     ("seed", _seed(s.seed))])]
    rows = []
    for c in s.completions[:MAX_ROWS]:
        rows.append([esc(c.rank if c.rank is not None else "—"), f"<code>{esc(c.describe())}"
                     "</code>", badge(c.verdict), _p(c.p_value), _num(c.exact_epsilon),
                     _num(c.tightness), _num(c.magnitude)])
    if rows:
        out.append("<h4>completions</h4>" + grid_table(
            ["rank", "expressions", "verdict", "p-value", "exact ε", "tightness", "magnitude"],
            rows, numeric=(0, 3, 4, 5, 6)))
    rejected = [c for c in s.completions if c.counterexample is not None][:5]
    for c in rejected:
        out.append(f"<details><summary>counterexample against <code>{esc(c.describe())}"
                   f"</code></summary>{render_counterexample(c.counterexample)}</details>")
    if s.baseline:
        out.append("<h4>baseline</h4>" + kv_table((str(k), esc(v))
                                                  for k, v in s.baseline.items()))
    out.append(_details_block(s.details))
    return _section("".join(out))


def render_suite_row(r: Any) -> str:
    """One engine's verdict on one mechanism (and its full result when kept)."""
    head = (f"<h4>{esc(r.engine)}: {badge(r.verdict)} <span class='meta'>"
            f"({_num(r.seconds, 3)} s)</span></h4>")
    result = getattr(r, "result", None)
    if result is not None:
        return head + to_html(result)
    from .library import figure_text

    rows = [("mechanism", esc(r.mechanism)), ("figure", esc(figure_text(r))),
            ("claimed ε", _num(r.claimed_epsilon)), ("known ε", _num(r.true_epsilon))]
    return head + kv_table(rows) + _details_block(r.details)


def render_suite_line(ln: Any) -> str:
    return render_suite_lines([ln])


def render_suite_lines(lines: Sequence[Any]) -> str:
    """The summary table: one line per mechanism, verdict colored."""
    rows = []
    for ln in lines:
        bound = "—" if ln.lower_bound is None else (
            f"{_num(ln.lower_bound, 3)}" + (f" ({pct(ln.confidence)})"
                                            if ln.confidence is not None else ""))
        # the whole claim, as the terminal shows it: (ε, δ) and ρ claims lost their δ or
        # everything ("0.5" for (0.5, 0.001), "—" for ρ)
        claim = getattr(ln, "claim", None)
        rows.append([name_cell(ln.mechanism),
                     esc(claim.replace("ε = ", "")) if claim else _num(ln.claimed_epsilon, 3),
                     _num(ln.true_epsilon, 3),
                     badge(ln.verdict), esc(ln.counterexample or "—"), bound,
                     _num(ln.exact_epsilon, 4), _num(ln.seconds, 3)])
    return grid_table(["mechanism", "claim", "known ε", "verdict", "counterexample",
                       "certified ε ≥", "exact ε", "s"], rows, numeric=(1, 2, 5, 6, 7))


def render_suite(s: Any) -> str:
    """Summary table, ε-bounds chart over all mechanisms, one collapsible section each."""
    mode = "quick" if s.quick else "full"
    state = " — interrupted: what finished is shown" if s.interrupted else ""
    tests = getattr(s, "tests", 0)
    control = (f"<p>Family-wise error ≤ {esc(f'{s.alpha:g}')} over {tests} statistical tests "
               "(Holm's procedure): the probability that any line wrongly reads “violation” "
               "is at most that. Exact and SMT results are proofs and need no "
               "correction.</p>" if tests else "")
    out = [f"<h2>suite ({esc(mode)}, engines {esc(', '.join(map(str, s.engines)))}, "
           f"{_num(s.seconds, 3)} s{esc(state)})</h2>", control,
           render_suite_lines(s.lines)]
    out.append(plot_epsilon_bounds(
        [{"name": ln.mechanism, "lower": ln.lower_bound, "confidence": ln.confidence,
          "exact": ln.exact_epsilon, "claimed": ln.claimed_epsilon, "known": ln.true_epsilon}
         for ln in s.lines], title="ε bounds over the library"))
    by_mech: dict[str, list] = {}
    for r in s.rows:
        by_mech.setdefault(r.mechanism, []).append(r)
    names = [ln.mechanism for ln in s.lines] + [m for m in by_mech
                                                 if m not in {ln.mechanism for ln in s.lines}]
    verdicts = {ln.mechanism: ln.verdict for ln in s.lines}
    for name in names:
        inner = "".join(render_suite_row(r) for r in by_mech.get(name, []))
        v = verdicts.get(name)
        summary = esc(name) + (f" — {badge(v)}" if v else "")
        out.append(f"<details><summary>{summary}</summary>{inner or '<p>no engine ran</p>'}"
                   "</details>")
    return _section("".join(out))


_RENDERERS: dict[str, Callable[[Any], str]] = {
    "DetectResult": render_detect,
    "PValueCurve": lambda c: _section(render_pvalue_curve(c)),
    "Counterexample": lambda c: _section(render_counterexample(c)),
    "Bound": render_bound,
    "ExactBound": render_exact,
    "AccuracyBound": render_accuracy,
    "PufferfishVerdict": render_pufferfish,
    "SynthResult": render_synth,
    "Completion": render_completion,
    "SuiteRow": lambda r: _section(render_suite_row(r)),
    "SuiteLine": lambda ln: _section(render_suite_line(ln)),
    "SuiteResult": render_suite,
    "CertifiedProfile": lambda r: _approx("html_certified", r),
    "ExactProfile": lambda r: _approx("html_exact_profile", r),
    "PorosityResult": lambda r: _floats_html("html_porosity", r),
    "SensitivityResult": lambda r: _floats_html("html_sensitivity", r),
}


def _floats_html(function: str, result: Any) -> str:
    """The float checks' renderers live with their CLI (``report/floats.py``)."""
    from . import floats

    return _section(getattr(floats, function)(result))


def to_html(obj: Any) -> str:
    """An HTML fragment for any privet result (lists one after another; else escaped repr)."""
    if isinstance(obj, (list, tuple)) and not dataclasses.is_dataclass(obj):
        curves = [o for o in obj if type(o).__name__ == "PValueCurve"]
        head = ""
        if len(curves) > 1:  # several curves: one StatDP Fig. 1 with all of them
            head = _section(plot_pvalue_curves(curves))
        return head + "".join(to_html(o) for o in obj)
    render = _RENDERERS.get(type(obj).__name__)
    if render is None or not dataclasses.is_dataclass(obj):
        return f"<pre>{esc(repr(obj))}</pre>"
    if interrupted(obj):  # the shared marker (privet.core.results.interrupted)
        from . import INTERRUPTED_NOTE

        return f'<p class="interrupted">{badge(INTERRUPTED_NOTE, "warn")}</p>' + render(obj)
    return render(obj)


def _approx(name: str, r: Any) -> str:
    from . import approx

    return getattr(approx, name)(r)


def repr_html(obj: Any) -> str:
    """The notebook form: the fragment with its style sheet (``_repr_html_``)."""
    return f'<div class="privet"><style>{CSS}</style>{to_html(obj)}</div>'


def legend() -> str:
    """"How to read this report": every verdict of the table in ``core.results``, then the
    figures."""
    items = "".join(f'<li><span class="verdict {v.tone}">{esc(v.words)}</span> — '
                    f"{esc(v.meaning)}.</li>" for v in VERDICTS)
    figures = ("<li>ε ≥ L: a certified lower bound, holding with the stated confidence; "
               "exact ε: the tight value on the checked domain; claimed ε: what the "
               "mechanism states; test ε: the ε a test was run at; known ε: the value the "
               "literature gives.</li>")
    return (f'<div class="legend"><b>How to read this report.</b><ul>{items}{figures}'
            "</ul></div>")


def page(title: str, body: str) -> str:
    """A complete HTML5 document: inline CSS, no external resource of any kind."""
    from .. import __version__

    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{CSS}\nbody{{margin:1.5em auto;"
            "max-width:96em;padding:0 1em}</style>\n</head>\n<body class=\"privet\">\n"
            f"<h1>{esc(title)}</h1>\n<p class=\"meta\">privet {esc(__version__)} · "
            f"{esc(now)}</p>\n{legend()}\n{body}\n</body>\n</html>\n")


def write_html(path: str | Path, objs: Any, title: str | None = None) -> Path:
    """Write ``objs`` (a result or a list of results) as one self-contained HTML file.

    The page is rendered first, then written to a temporary file and renamed into place
    (:mod:`privet.report.output`): a failing or interrupted write leaves no half-written
    file, and a directory that does not exist is refused, not created."""
    from .output import check_output_path, write_atomic

    check_output_path(path, "--html")
    items = list(objs) if isinstance(objs, (list, tuple)) and not \
        dataclasses.is_dataclass(objs) else [objs]
    if title is None:
        names = [getattr(o, "mechanism", None) or getattr(o, "scenario", None) or
                 getattr(o, "sketch", None) for o in items]
        names = [str(n) for n in names if n]
        title = "privet report" + (f": {', '.join(dict.fromkeys(names))}" if names else "")
    return write_atomic(path, page(title, to_html(items)), "--html")


def add_html_option(parser: Any) -> None:
    """Add ``--html FILE`` to an argparse (sub)parser (once)."""
    if not any(a.dest == "html" for a in parser._actions):
        from ..cli_support import output_file

        parser.add_argument("--html", default=None, metavar="FILE", type=output_file("--html"),
                            help="also write a self-contained HTML report (plots inline, "
                                 "opens with no network) to FILE")


def save_from_cli(args: Any, result: Any, title: str | None = None) -> Path | None:
    """Write ``args.html`` when given and say so (on stderr under --json: stdout is JSON)."""
    path = getattr(args, "html", None)
    if not path:
        return None
    out = write_html(path, [result], title=title)
    message = f"report saved to {path}"
    if getattr(args, "json", False):
        import sys

        print(message, file=sys.stderr)
    else:
        from . import console

        console().print(message, markup=False, highlight=False)
    return out


__all__ = ["CSS", "add_html_option", "badge", "distribution_table", "esc", "page",
           "plot_epsilon_bounds", "plot_histograms", "plot_pvalue_curves", "render_accuracy",
           "render_bound", "render_completion", "render_counterexample", "render_detect",
           "render_exact", "render_pufferfish", "render_pvalue_curve", "render_suite",
           "render_suite_row", "render_synth", "repr_html", "save_from_cli", "to_html",
           "verdict_class", "write_html"]
