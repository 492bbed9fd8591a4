"""DP-Finder's intervals at their numerical edges."""

from __future__ import annotations


def test_mclt_interval_far_out_is_quiet_and_wide():
    """Rare events with a large estimate: the search for the width reaches exp(eps + D) far
    beyond a double's range; the ratio's CDF is then its limit 1, without overflow warnings."""
    import warnings

    from privet.stats.intervals import Moments, mclt_interval

    m = Moments(p1=3e-6, p2=1e-9, var1=3e-6, var2=1e-9, cov=0.0, n=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        iv = mclt_interval(m, 0.9)
    assert iv.low <= m.epsilon <= iv.high and iv.high - iv.low > 1.0
