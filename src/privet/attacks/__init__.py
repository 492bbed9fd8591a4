"""Attacks shared by detect and search (a layer below the engines; calls core, stats and
execution only). :mod:`privet.attacks.tails`: threshold events over a learnt scalar
statistic, for approximate-DP audits."""
