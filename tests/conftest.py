"""Results shared by the rendering tests (terminal and HTML): small exact runs."""

import pytest

import privet
from privet import mechanisms
from privet.exact import accuracy


@pytest.fixture(scope="session")
def ex():
    """Exact ε of randomized response on 2 bits, with Fractions."""
    return privet.exact(mechanisms.get("wmc.randomized_response"), length=2, fractions=True)


@pytest.fixture(scope="session")
def acc():
    """Tight (1, β)-accuracy of the randomized-response count on 2 bits."""
    return accuracy(mechanisms.get("wmc.rr_count"), 1, length=2, fractions=True)
