"""An example test file: put privet's checks in your own test suite (run it with pytest).

assert_dp fails when privet finds a violation of the claimed ε. With the default seed the
verdict is the same on every run; over seeds, a mechanism that really is ε-DP fails with
probability at most alpha (here 0.01). assert_not_dp guards a known-bad variant, so a
refactoring that silently "fixes" or breaks the test itself is noticed.
"""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from my_mechanisms import randomized_response, report_noisy_max, report_noisy_max_value

from privet.testing import assert_dp, assert_not_dp


def test_report_noisy_max_keeps_its_claim():
    assert_dp(report_noisy_max, alpha=0.01, n_final=200_000)


def test_releasing_the_noisy_value_is_caught():
    res = assert_not_dp(report_noisy_max_value, n_final=200_000)
    assert res.counterexample is not None      # D1, D2, the event and the counts


def test_randomized_response_exact_epsilon():
    # exact inference: a proof for the domain it checks (3 bits in {0, 1}), and tight
    res = assert_dp(randomized_response, method="exact")
    assert abs(res.epsilon - math.log(3)) < 1e-9
