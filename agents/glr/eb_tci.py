"""EB-TCI: empirical-best leader, penalised transportation-cost challenger (k = 1)."""

from __future__ import annotations

from agents.glr.top_two import EB, TCI, TopTwo

__all__ = ["EBTCI"]


class EBTCI(TopTwo):
    """EB-TCI with GLR stopping (best arm only).

    Paper:
        Jourdan, Degenne, Baudry, de Heide, Kaufmann. "Top Two algorithms revisited".
        NeurIPS 2022, Algorithm 1 with the EB leader ``B = argmax mean`` and the TCI
        challenger ``argmin_{j != B} W_{B j} + log N_j``; ``beta = 1/2`` with tracking;
        no forced exploration (the ``log N_j`` penalty explores). ``selection="ids"``:
        You et al. 2023's information-directed ``beta``.

    Published for k = 1 only (the penalty is defined for one leader). Arguments:
    :class:`agents.glr.top_two.TopTwo`.
    """

    name = "eb_tci"
    k_values = frozenset({1})
    leader = EB
    challenger = TCI
