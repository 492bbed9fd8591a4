"""The nine sketches of KOLAHAL Table I (slow: the benchmark prints the figures)."""

import pytest

from privet.mechanisms.kolahal_sketches import SKETCHES
from privet.synth import synth


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SKETCHES))
def test_textbook_noise_is_among_the_passing_completions(name):
    r = synth(SKETCHES[name], seed=0)
    assert r.status == "found"
    assert r.textbook_rank is not None, [c.describe() for c in r.completions]
