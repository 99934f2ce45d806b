"""T3C: Thompson-sampling leader, transportation-cost challenger (Shang et al. 2020)."""

from __future__ import annotations

from agents.glr.top_two import TC, TS, TopTwo

__all__ = ["T3C"]


class T3C(TopTwo):
    """T3C with GLR stopping.

    Paper:
        Xuedong Shang, Rianne de Heide, Emilie Kaufmann, Pierre Menard, Michal Valko.
        "Fixed-confidence guarantees for Bayesian best-arm identification". AISTATS
        2020, Algorithm 2 (T3C): leader = the best arm of a posterior sample, challenger
        = ``argmin_{j != I} W_{I j}`` on the empirical means, leader with probability
        ``beta = 1/2`` by a coin; Chernoff (GLR) stopping. For ``k > 1`` the leader set is
        the sampled top ``k`` and the challenger pair the GLR's minimising pair against it
        (You et al. 2023's top-k form).

    Defaults: coin selection (``tracking=False``), no forced exploration. Posteriors:
    :mod:`agents.glr.top_two`. Arguments: :class:`agents.glr.top_two.TopTwo`.
    """

    name = "t3c"
    leader = TS
    challenger = TC

    def __init__(self, delta: float = 0.1, tracking: bool = False, **kwargs) -> None:
        super().__init__(delta=delta, tracking=tracking, **kwargs)
