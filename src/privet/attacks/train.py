"""Fitting the scores of :mod:`privet.attacks.scores` on two samples (label 1: outputs of
M(D1), label 0: outputs of M(D2)), as DP-Sniper trains its classifiers (Bichsel et al.,
S&P 2021: logistic regression and a small neural network, 10 and 5 ReLU units).

scikit-learn is imported here, inside the functions, so ``import privet`` stays fast.
Which models apply is read off the outputs (:func:`models_for`): the empirical table when
the outputs take few distinct values, a histogram over one or two continuous entries,
logistic regression on the features always, the neural network on request, and the
StatDP-style statistics (entries, sum, flag counts) as a cheap baseline.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..core.noise import row_codes
from ..execution.threads import single_threaded
from ..stats.counts import two_sample_counts
from .features import Batch, FeatureMap, fit_features, rows_of
from .scores import MLP, Bins, Linear, Score, Stat, Table

__all__ = ["MODELS", "fit", "fit_bins", "fit_linear", "fit_mlp", "fit_table", "models_for",
           "smoothed_log_ratio", "stat_scores"]

MODELS = ("table", "bins", "logistic", "mlp", "stats")
MAX_TABLE_ROWS = 4096  # more distinct outputs than this: not a table
MAX_FIT_ROWS = 1 << 16  # per input, for the fitted models (more adds time, not accuracy)
SMOOTH = 0.5           # pseudo-count of the empirical log-ratios


def smoothed_log_ratio(c1: np.ndarray, c0: np.ndarray, n1: int, n0: int) -> np.ndarray:
    """Per cell, the log-ratio of the frequencies ``c1 / n1`` and ``c0 / n0``, each count
    given :data:`SMOOTH` pseudo-counts (the empirical table's and histogram's values)."""
    k = len(c1)
    return (np.log((c1 + SMOOTH) / (n1 + SMOOTH * k))
            - np.log((c0 + SMOOTH) / (n0 + SMOOTH * k)))


def _pooled_codes(r1, r0) -> np.ndarray:
    """:func:`~privet.core.noise.row_codes` of both samples stacked (kept on ``r1`` when it
    is a :class:`~privet.attacks.features.Batch`: the table's test and its fit share them)."""
    def codes():
        return row_codes(np.vstack([rows_of(r1), rows_of(r0)]))
    both = isinstance(r1, Batch) and isinstance(r0, Batch)
    return r1.memo(("row codes", r0), codes) if both else codes()


def distinct_rows(r1: np.ndarray, r0: np.ndarray, cap: int = MAX_TABLE_ROWS,
                  enough: int | None = None) -> int:
    """The number of distinct output rows of both samples (counted on a prefix of each,
    enough to tell whether it exceeds ``cap``); with ``enough``, the count of the first
    ``enough + 1`` rows of each as soon as it exceeds ``enough`` (wide outputs of few values
    each, such as float-exact codes, whose rows rarely repeat)."""
    head = None if enough is None else int(enough) + 1
    if head is not None and len(r1) + len(r0) > 2 * head:
        first = len(np.unique(row_codes(np.vstack([rows_of(r1)[:head], rows_of(r0)[:head]]))))
        if first > enough:
            return first
    if len(r1) <= 4 * cap and len(r0) <= 4 * cap:  # the prefixes are the samples
        return len(np.unique(_pooled_codes(r1, r0)))
    a, b = rows_of(r1)[: 4 * cap], rows_of(r0)[: 4 * cap]
    return len(np.unique(row_codes(np.vstack([a, b]))))


def discrete(r1: np.ndarray, r0: np.ndarray) -> bool:
    """Few distinct outputs, each seen many times: at most ``MAX_TABLE_ROWS`` and at most
    one per 8 samples (continuous outputs, all distinct, are never a table)."""
    total = min(len(r1), 4 * MAX_TABLE_ROWS) + min(len(r0), 4 * MAX_TABLE_ROWS)
    limit = min(MAX_TABLE_ROWS, total / 8)
    a, b = rows_of(r1)[: 4 * MAX_TABLE_ROWS], rows_of(r0)[: 4 * MAX_TABLE_ROWS]
    for j in range(a.shape[1]):  # rows are at least as many as the values of any entry:
        if len(np.unique(np.r_[a[:, j], b[:, j]])) > limit:  # one continuous entry decides
            return False
    return distinct_rows(r1, r0, enough=int(limit)) <= limit


def fit_table(r1, r0) -> Table | None:
    """Smoothed empirical log-ratio per distinct output row (None: not :func:`discrete`)."""
    a, b = rows_of(r1), rows_of(r0)
    if not discrete(r1, r0):
        return None
    uniq, c1, c0 = two_sample_counts(a, b, codes=_pooled_codes(r1, r0))
    values = smoothed_log_ratio(c1.astype(float), c0.astype(float), len(a), len(b))
    return Table(tuple(tuple(r) for r in uniq.tolist()), tuple(values.tolist()), 0.0)


def fit_bins(r1, r0, coords: tuple[int, ...], bins: int | None = None) -> Bins:
    """A histogram model over one or two entries: quantile edges of the pooled sample."""
    a, b = rows_of(r1), rows_of(r0)
    per = bins or (48 if len(coords) == 1 else 12)
    edges = []
    for j in coords:
        col = np.r_[a[:, j], b[:, j]]
        col = col[np.isfinite(col)]
        e = np.unique(np.quantile(col, np.linspace(0, 1, per + 1)[1:-1])) if col.size else \
            np.array([0.0])
        edges.append(tuple(e.tolist()))
    model = Bins(tuple(coords), tuple(edges), ())
    size = int(np.prod([len(e) + 1 for e in edges]))
    c1 = np.bincount(model.cells(r1), minlength=size).astype(float)  # a Batch keeps them
    c0 = np.bincount(model.cells(r0), minlength=size).astype(float)
    values = smoothed_log_ratio(c1, c0, len(a), len(b))
    return Bins(tuple(coords), tuple(edges), tuple(values.tolist()))


def _xy(fmap: FeatureMap, r1, r0) -> tuple[np.ndarray, np.ndarray]:
    # a sample within the cap is transformed whole (a Batch keeps the matrix for scoring)
    x1, x0 = (fmap.transform(r) if len(r) <= MAX_FIT_ROWS else
              fmap.transform(rows_of(r)[:MAX_FIT_ROWS]) for r in (r1, r0))
    x = np.vstack([x1, x0])
    y = np.r_[np.ones(len(x1)), np.zeros(len(x0))]
    return x, y


NEWTON_FEATURES = 256  # up to this many features, logistic regression takes Newton steps


def fit_linear(fmap: FeatureMap, r1, r0, c: float = 1.0) -> Linear | None:
    """Logistic regression (L2, ``C = c``) on the features: its log-odds. Up to
    ``NEWTON_FEATURES`` features the fit takes Newton steps with a Cholesky solve
    (scikit-learn's ``newton-cholesky``: two or three steps reach the optimum that L-BFGS
    approaches in some thirty, four times faster on 2^15 outputs of 54 features), beyond
    them L-BFGS (a step costs the square of the features)."""
    if fmap.size == 0:
        return None
    from sklearn.linear_model import LogisticRegression

    x, y = _xy(fmap, r1, r0)
    solver = "newton-cholesky" if fmap.size <= NEWTON_FEATURES else "lbfgs"
    with warnings.catch_warnings(), single_threaded():
        warnings.simplefilter("ignore")
        model = LogisticRegression(C=c, max_iter=300, solver=solver).fit(x, y)
    return Linear(fmap, tuple(model.coef_[0].tolist()), float(model.intercept_[0]))


def fit_mlp(fmap: FeatureMap, r1, r0, hidden: tuple[int, ...] = (10, 5), seed: int = 0,
            epochs: int = 20) -> MLP | None:
    """A ReLU network (DP-Sniper's 10-5 units) trained with Adam; its output logit."""
    if fmap.size == 0:
        return None
    from sklearn.neural_network import MLPClassifier

    x, y = _xy(fmap, r1, r0)
    with warnings.catch_warnings(), single_threaded():
        warnings.simplefilter("ignore")
        model = MLPClassifier(hidden_layer_sizes=hidden, alpha=1e-4, batch_size=512,
                              learning_rate_init=1e-2, max_iter=epochs, random_state=seed,
                              n_iter_no_change=4, tol=1e-5).fit(x, y)
    layers = tuple((w, b) for w, b in zip(model.coefs_, model.intercepts_))
    return MLP(fmap, layers)


STAT_ENTRIES = 10  # wider outputs get no per-entry statistics (the linear score covers them)


def stat_scores(fmap: FeatureMap, r1=None, r0=None) -> list[Score]:
    """Each entry (up to ``STAT_ENTRIES`` entries), the sum of the entries, the number of
    entries above their medians, the count of each flag value (their events take both
    tails, for either input) and, for outputs of two or more entries all numeric, the
    number of steps ω[j] - ω[j-1] above their medians. Given the training outputs ``r1``
    (of x) and ``r0`` (of x'), each entry and step counts on the side where x's median lay
    (:class:`~privet.attacks.scores.Stat`'s ``sides``), of three centers: the pooled
    median, x's median and x''s. The pooled one is where a Laplace term of the
    log-likelihood ratio changes sign; past x's own median (or x''s, for the other
    direction) each term is at its largest (the ratio of two shifted Laplace tails is
    constant), so 'every entry beyond x's median' is the event of the largest ratio."""
    flags = tuple(sorted({float(v) for _, v in fmap.indicators}))
    out: list[Score] = []
    numeric = [int(j) for j, _, _ in fmap.numeric]
    trained = r1 is not None and r0 is not None
    rows1, rows0 = (rows_of(r1), rows_of(r0)) if trained else (None, None)
    for j in range(fmap.width if fmap.width <= STAT_ENTRIES else 0):
        out.append(Stat("entry", j))
    if fmap.width > 1 and numeric:
        out.append(Stat("sum", flags=flags))
    if len(numeric) > 1:
        pooled = np.array([c for _, c, _ in fmap.numeric])
        if trained:
            out += _side_counts("above", rows1[:, numeric], rows0[:, numeric], flags,
                                numeric, pooled)
        else:
            out.append(Stat("above", flags=flags, centers=tuple(zip(numeric, pooled.tolist()))))
    if fmap.width > 1:
        out.extend(Stat("count", value=v) for v in flags)
    if trained and fmap.width > 1 and len(numeric) == fmap.width and not fmap.indicators:
        s1, s0 = _steps(rows1), _steps(rows0)
        pooled = _medians(np.vstack([s1, s0]), ())
        if np.all(np.isfinite(pooled)):
            out += _side_counts("steps", s1, s0, (), list(range(fmap.width)), pooled)
    return out


def _steps(rows: np.ndarray) -> np.ndarray:
    """ω[j] - ω[j-1] per row (ω[-1] = 0; :func:`_medians` skips the non-finite ones)."""
    with np.errstate(invalid="ignore"):
        return np.diff(rows, axis=1, prepend=0.0)


def _medians(a: np.ndarray, flags: tuple) -> np.ndarray:
    """Per column, the median of the finite values that are not flags (NaN if none)."""
    ok = np.isfinite(a) & ~np.isin(a, flags)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a column of flags or non-finite values: NaN
        return np.nanmedian(np.where(ok, a, np.nan), axis=0)


def _side_counts(stat: str, a1: np.ndarray, a0: np.ndarray, flags: tuple, columns: list,
                 pooled: np.ndarray) -> list[Stat]:
    """The ``stat`` counts ('above' or 'steps') of the columns ``a1`` (of x) and ``a0``
    (of x') on x's side (+1 where x's median is at least x''s) of three centers: the
    ``pooled`` medians, x's medians and x''s (a column without a median of its own keeps
    the pooled one); centers that coincide give one statistic."""
    m1, m0 = _medians(a1, flags), _medians(a0, flags)
    sides = tuple(-1.0 if b < a else 1.0 for b, a in zip(m1.tolist(), m0.tolist()))
    out, seen = [], set()
    for at, centers in (("pooled", pooled), ("x", m1), ("x'", m0)):
        centers = np.where(np.isfinite(centers), centers, pooled)
        key = tuple(centers.tolist())
        if key in seen:
            continue
        seen.add(key)
        out.append(Stat(stat, flags=flags, centers=tuple(zip(columns, key)), sides=sides,
                        at=at))
    return out


def models_for(r1, r0, fmap: FeatureMap, cheap: bool = False) -> tuple[str, ...]:
    """The models that apply to these outputs. With ``cheap`` (screening many pairs): the
    table alone for discrete outputs (it is their likelihood ratio), the histogram and the
    statistics for one or two continuous entries, else logistic regression and the
    statistics. Without ``cheap``, logistic regression is added, the statistics are dropped
    for discrete outputs (their events are unions of outputs, which the table's events
    already order by likelihood ratio), and outputs with two or more continuous entries get
    the neural network too (a ratio that is a sum of clipped terms of linear combinations of
    the entries, as for prefix sums, is beyond a linear score)."""
    if discrete(r1, r0):
        return ("table",) if cheap else ("table", "logistic")
    if fmap.width <= 2 and not fmap.indicators:
        return ("bins", "stats") if cheap else ("bins", "logistic", "stats")
    if cheap or len(fmap.numeric) < 2:
        return ("logistic", "stats")
    return ("logistic", "stats", "mlp")


def fit(model: str, r1, r0, fmap: FeatureMap | None = None, seed: int = 0) -> list[Score]:
    """The scores of ``model`` fitted on ``r1`` (label 1) and ``r0`` (label 0)."""
    fmap = fmap if fmap is not None else fit_features(np.vstack([rows_of(r1), rows_of(r0)]))
    if model == "table":
        got = fit_table(r1, r0)
    elif model == "bins":
        got = fit_bins(r1, r0, tuple(range(min(fmap.width, 2))))
    elif model == "logistic":
        got = fit_linear(fmap, r1, r0)
    elif model == "mlp":
        got = fit_mlp(fmap, r1, r0, seed=seed)
    elif model == "stats":
        return stat_scores(fmap, r1, r0)
    else:
        raise ValueError(f"unknown attack model {model!r}; use one of {', '.join(MODELS)}.")
    return [] if got is None else [got]
