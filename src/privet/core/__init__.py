"""privet's shared vocabulary: mechanisms, noise interpreters, ops, neighbors, events, results."""

from . import events, neighbors, ops, results
from .errors import (
    GridTooLargeError,
    InputError,
    MechanismError,
    NeighborError,
    NoiseError,
    NotEnumerableError,
    ParameterError,
    PrivetError,
    ReplayError,
    SolverError,
    UnsupportedError,
    check_epsilon,
)
from .mechanism import (
    ABORTED,
    FALSE,
    Domain,
    Mechanism,
    Output,
    as_mechanism,
    from_blackbox,
    from_statdp,
    from_vectorized,
    mechanism,
)
from .noise import Dist, Distribution, Enumerate, Noise, Replay, Sampler, Tape, enumerate_outputs

__all__ = [
    "ABORTED", "FALSE", "Dist", "Distribution", "Domain", "Enumerate", "GridTooLargeError",
    "InputError", "Mechanism", "MechanismError", "NeighborError", "Noise", "NoiseError",
    "NotEnumerableError", "Output", "ParameterError", "PrivetError", "Replay", "ReplayError",
    "Sampler", "SolverError", "Tape", "UnsupportedError", "as_mechanism", "check_epsilon",
    "enumerate_outputs", "events", "from_blackbox", "from_statdp", "from_vectorized",
    "mechanism", "neighbors", "ops", "results",
]
