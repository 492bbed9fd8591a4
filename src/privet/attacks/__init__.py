"""Classifier attacks on mechanisms that can only be sampled (DP-Sniper, Bichsel, Steffen,
Bogunovic, Vechev, S&P 2021), shared by ``privet.search`` and ``privet.detect``.

A layer between the engines and ``core``/``stats``/``execution``: it imports nothing from
the engines. The pieces:

* :mod:`~privet.attacks.features` -- output feature maps (any length, sentinels, flags,
  categories, bits);
* :mod:`~privet.attacks.scores` and :mod:`~privet.attacks.train` -- score functions
  (logistic regression, a small neural network, empirical tables, histograms, statistics)
  fitted with scikit-learn, evaluated with NumPy;
* :mod:`~privet.attacks.events` -- the threshold event with a randomized boundary (it
  serializes and describes itself);
* :mod:`~privet.attacks.threshold` -- the threshold chosen on a selection sample;
* :mod:`~privet.attacks.inputs` -- candidate input pairs and local moves;
* :mod:`~privet.attacks.witness` -- the three-way split search for the best (pair, event);
* :mod:`~privet.attacks.sampling` -- paired or independent samples and the streamed,
  certified fresh sample;
* :mod:`~privet.attacks.tails` -- threshold events over a learnt scalar statistic, for
  approximate-DP audits (families of tail events counted at once).
"""

from __future__ import annotations

from .events import Threshold
from .sampling import Certificate, certify, draw_pair
from .witness import Budget, Candidate, search_witness

__all__ = ["Budget", "Candidate", "Certificate", "Threshold", "certify", "draw_pair",
           "search_witness"]
