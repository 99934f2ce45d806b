"""EB-TC: empirical-best leader, transportation-cost challenger (Jourdan et al. 2022), top-k."""

from __future__ import annotations

from agents.glr.top_two import EB, TC, TopTwo

__all__ = ["EBTC"]


class EBTC(TopTwo):
    """EB-TC with GLR stopping, for the best arm and (pair form) for the top ``k``.

    Paper:
        Marc Jourdan, Remy Degenne, Dorian Baudry, Rianne de Heide, Emilie Kaufmann.
        "Top Two algorithms revisited". NeurIPS 2022, Algorithm 1 with the EB leader and
        the TC challenger ``argmin_{j != B} W_{B j}``, ``beta = 1/2``, tracking; GLR
        stopping (their Sec. 2). Information-directed selection of the leader's
        probability (``selection="ids"``): You, Qin, Wang, Yang, "Information-directed
        selection for top-two algorithms", ICML 2023, whose top-k form (leader set = the
        empirical top k, challenger pair = the GLR's minimising pair) is the one used for
        ``k > 1``.

    Defaults: ``beta = 1/2``, tracking, forced exploration on (EB-TC without it can
    starve an arm; Jourdan et al. 2022 Sec. 2 use EB-TCI, :class:`~agents.glr.eb_tci.EBTCI`,
    to avoid it), threshold ``"log"``. Arguments: :class:`agents.glr.top_two.TopTwo`.
    """

    name = "eb_tc"
    leader = EB
    challenger = TC

    def __init__(self, delta: float = 0.1, forced: bool = True, **kwargs) -> None:
        super().__init__(delta=delta, forced=forced, **kwargs)
