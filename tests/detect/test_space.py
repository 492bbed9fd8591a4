"""Search spaces of StatDP Sec. 4.3: counts from histograms equal counts of the events."""

import warnings

import numpy as np
import pytest

from privet.core.mechanism import ABORTED, FALSE, Output
from privet.detect.space import NoEventError, Reducer, build_plan, count_events, infer_schema


class _Spec:
    def __init__(self, output, name="m"):
        self.output, self.name = output, name


def _check_all_counts(outputs, output_spec, refs=None, sample=400, seed=0):
    schema = infer_schema(_Spec(output_spec), [("x", outputs)])
    rows = outputs.reshape(outputs.shape[0], -1).astype(float)
    refs = np.array(refs if refs is not None else [rows[0]])
    plan = build_plan(schema, rows, refs)
    # reduce in two chunks, as sample-and-reduce does
    red = Reducer(plan)
    hist = red(outputs[: len(outputs) // 2]) + red(outputs[len(outputs) // 2:])
    counts = count_events(plan, hist)
    rng = np.random.default_rng(seed)
    pick = rng.choice(plan.start.size, size=min(sample, plan.start.size), replace=False)
    for i in pick:
        e = plan.event(int(i))
        assert counts[i] == np.count_nonzero(e.contains(outputs)), e.describe()
    return plan, counts


def test_numeric_vector_intervals_on_coordinates_and_summaries():
    rng = np.random.default_rng(1)
    out = 1.0 + rng.laplace(0, 1.4, (3000, 5))
    plan, _ = _check_all_counts(out, Output.numeric())
    stats = {f.stat for f in plan.features}
    assert stats == {"coord", "avg", "min", "max"}
    assert not plan.schema.categorical


def test_scalar_numeric_has_one_sided_tails():
    rng = np.random.default_rng(2)
    out = rng.laplace(0, 2, 4000)
    plan, counts = _check_all_counts(out, Output.numeric())
    texts = [plan.event(i).describe() for i in range(plan.start.size)]
    assert any(t.startswith("ω[0] ≤") for t in texts)
    # upper tails hold finite values only (not ABORTED = +inf), and say so
    assert any(t.endswith("< ω[0] < ∞") for t in texts)


def test_integer_outputs_get_equality_events():
    rng = np.random.default_rng(3)
    out = rng.integers(0, 5, 2000)
    plan, _ = _check_all_counts(out, Output("categorical", None, True, None))
    texts = {plan.event(i).describe() for i in range(plan.start.size)}
    assert {"ω[0] = 0", "ω[0] = 4"} <= texts


VARIABLE_BOOLS = Output.categorical((0, 1), sentinels=("ABORTED",), variable=True)


def _variable_bools(seed: int, n: int, m: int) -> np.ndarray:
    """0/1 answers, padded with ABORTED after a random stop (sparse-vector outputs)."""
    rng = np.random.default_rng(seed)
    out = rng.integers(0, 2, (n, m)).astype(float)
    stop = rng.integers(1, m + 1, n)
    out[np.arange(m)[None, :] >= stop[:, None]] = ABORTED
    return out


def test_variable_length_categorical_hamming_count_length():
    out = _variable_bools(4, 3000, 6)
    plan, _ = _check_all_counts(out, VARIABLE_BOOLS,
                                refs=[[1, 0, ABORTED, ABORTED, ABORTED, ABORTED]])
    kinds = {f.kind for f in plan.features}
    assert {"hamming", "count", "length", "catcoord"} <= kinds


def test_mixed_outputs_cross_products():
    # iSVT4-like: FALSE below the threshold, a number above, then ABORTED
    rng = np.random.default_rng(5)
    n, m = 4000, 5
    stop = rng.integers(0, m + 1, n)
    out = np.full((n, m), ABORTED)
    for j in range(m):
        out[stop > j, j] = FALSE
        hit = stop == j
        out[hit, j] = rng.normal(2, 1, hit.sum())
    spec = Output.numeric(sentinels=("FALSE", "ABORTED"), variable=True)
    plan, counts = _check_all_counts(out, spec, sample=600)
    assert plan.schema.mixed
    cross = [i for i in range(plan.start.size) if plan.features[plan.feat[i]].kind == "cross"]
    assert cross
    text = plan.event(cross[len(cross) // 2]).describe()
    assert "count(FALSE)" in text or "length" in text
    assert " and " in text


def test_no_event_for_empty_outputs():
    with pytest.raises(NoEventError):
        infer_schema(_Spec(Output()), [("x", np.zeros((10, 0)))])


def test_categorical_rows_reduced_chunk_by_chunk_match_one_pass():
    # the codes of a categorical row are computed once per plan and looked up in later
    # chunks: chunks that bring new rows (and a value the pilot never showed) must still give
    # the histogram of one pass over every row (the row-by-row code path)
    n = 2000
    out = _variable_bools(5, n, 7)
    pilot = out[:200]
    schema = infer_schema(_Spec(VARIABLE_BOOLS), [("x", pilot)])
    plan = build_plan(schema, pilot, np.array([pilot[0]]))
    later = out.copy()
    later[::50, 0] = 3.0  # a category outside the pilot's values
    chunks = np.array_split(later, 9)
    red = Reducer(plan)
    hist = sum(red(c) for c in chunks)
    assert plan.row_codes is not None and 0 < plan.row_codes[0].size < n  # rows repeat
    from privet.detect.space import _context

    ctx = _context(later, plan)
    codes = np.concatenate([f.codes(ctx) + f.offset for f in plan.features])
    assert np.array_equal(hist, np.bincount(codes, minlength=plan.total))


@pytest.mark.parametrize("width", [1, 2, 5, 9, 20])
def test_row_statistics_by_columns_equal_numpys_row_reductions(width):
    # the column-at-a-time min, max and counts must give NumPy's axis-1 answers exactly,
    # sentinels, infinities and NaN included (the codes of every event depend on them)
    from privet.detect.space import _extreme, _num_values, _row_count

    rng = np.random.default_rng(width)
    rows = rng.laplace(size=(3_000, width))
    rows[rng.random(rows.shape) < 0.1] = FALSE
    rows[rng.random(rows.shape) < 0.05] = ABORTED
    rows[rng.random(rows.shape) < 0.02] = np.nan
    rows[rng.random(rows.shape) < 0.02] = -np.inf
    assert np.array_equal(_extreme(rows, np.minimum), rows.min(axis=1), equal_nan=True)
    assert np.array_equal(_extreme(rows, np.maximum), rows.max(axis=1), equal_nan=True)
    mask = rows == FALSE
    assert np.array_equal(_row_count(mask), np.count_nonzero(mask, axis=1))
    finite = np.where(np.isfinite(rows), rows, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows without a finite entry: NaN
        want_min = np.nanmin(finite, axis=1)
    got = _num_values(rows, "min", None, {})
    assert np.array_equal(got, want_min, equal_nan=True)


def test_wide_outputs_get_coordinate_events_on_the_entries_their_pilots_separate():
    from privet.detect.space import ENTRY_EVENTS, separating_entries

    rng = np.random.default_rng(3)
    width = 300
    base = rng.laplace(0, 1, (2000, width))
    moved = rng.laplace(0, 1, (2000, width))
    moved[:, 123] += 1.0                        # the entry one pair moves
    other = rng.laplace(0, 1, (2000, width))
    other[:, 7] -= 1.0                          # ... and the entry another pair moves
    schema = infer_schema(_Spec(Output.numeric()), [("x", base)])
    entries = separating_entries(schema, [(base, moved), (base, other)])
    assert len(entries) == ENTRY_EVENTS and {7, 123} <= set(entries.tolist())
    assert separating_entries(infer_schema(_Spec(Output.numeric()), [("x", base[:, :64])]),
                              [(base[:, :64], moved[:, :64])]) is None  # narrow: all
    plan = build_plan(schema, np.vstack([base, moved]), np.array([base[0]]), entries)
    coords = {f.coord for f in plan.features if f.stat == "coord"}
    assert coords == set(entries.tolist())
    assert {f.stat for f in plan.features} == {"coord", "avg", "min", "max"}  # all entries
    # counts from the narrowed plan's histograms are the events' counts
    hist = Reducer(plan)(moved)
    counts = count_events(plan, hist)
    for i in np.random.default_rng(0).choice(plan.start.size, 200, replace=False):
        assert counts[i] == np.count_nonzero(plan.event(int(i)).contains(moved))
