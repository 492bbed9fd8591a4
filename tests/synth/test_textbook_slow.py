"""The textbook sketches beyond KOLAHAL's nine, and AboveT2's ranking under --quick (slow:
benchmarks/synth_kolahal.py prints the figures)."""

import numpy as np
import pytest

from privet.mechanisms.kolahal_sketches import SKETCHES
from privet.mechanisms.textbook_sketches import SKETCHES as TEXTBOOK
from privet.synth import synth
from privet.synth.examples import example_pairs

QUICK = dict(n_select=5_000, n_final=10_000, m_region=10_000, m_rank=10_000,
             verify_n=(10_000, 50_000))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("name", sorted(TEXTBOOK))
def test_textbook_noise_is_recovered_at_rank_1(name, seed):
    r = synth(TEXTBOOK[name], seed=seed, **QUICK)
    assert r.textbook_rank == 1, [c.describe() for c in r.completions]


@pytest.mark.slow
def test_quick_above_t2_ranks_nothing_that_detect_rejects():
    """Issue 12: under --quick sizes, AboveT2 ranked (2/ε, 3/ε, ⊥), which privet.detect
    rejects (p = 0.0007). Every ranked completion must pass a fresh detect run at its own
    sizes at γ (a different seed from synth's final check)."""
    from privet.detect import detect

    sk = SKETCHES["kolahal.above_t2"]
    r = synth(sk, seed=0, **QUICK)
    setting = r.details["settings"][0]
    pairs = example_pairs(sk, setting)
    args = {k: v for k, v in setting.items() if k != "length"}
    for mech, c in zip(r.mechanisms(), [c for c in r.completions if c.passed]):
        res = detect(mech, setting["epsilon"], inputs=[(p.d1, p.d2) for p in pairs],
                     args=args, seed=2024)
        assert not res.violation, (c.describe(), res.verdict)
    assert ("2/ε", "3/ε", "⊥") not in [c.exprs for c in r.completions if c.passed]


@pytest.mark.slow
def test_quick_smart_sum_keeps_the_textbook_answer():
    r = synth(SKETCHES["kolahal.smart_sum"], seed=0, **QUICK)
    assert r.textbook_preliminary_rank is not None
    assert r.textbook_rank is not None
    assert np.isfinite(r.times["total"])
