"""SAR: Successive Accepts and Rejects (Bubeck, Wang, Viswanathan 2013), NSAR with p = 1."""

from __future__ import annotations

from agents.elimination.nsar import NSAR

__all__ = ["SAR"]


class SAR(NSAR):
    """Successive Accepts and Rejects for top-k identification with a fixed budget.

    Paper:
        Sébastien Bubeck, Tengyao Wang, Nitin Viswanathan. "Multiple identifications
        in multi-armed bandits". ICML 2013 (PMLR 28(1):258-265), Sec. 3, algorithm
        "SAR" (Successive Accepts and Rejects), with the budget split of Audibert &
        Bubeck's Successive Rejects (COLT 2010). Used as the baseline of Shahrampour &
        Tarokh (2017), who write it as their Fig. 1 with ``p = 1``.

    Published definition used: ``log-bar(K) = 1/2 + sum_{i=2..K} 1/i``, ``n_0 = 0``,
    ``n_k = ceil((1 / log-bar(K)) (T - K) / (K + 1 - k))`` for phases ``k = 1..K-1``;
    in phase ``k`` every active arm is pulled ``n_k - n_{k-1}`` more times, the active
    arms are ordered by empirical mean, the empirical gaps are
    ``mean - mean_sigma(m(k) + 1)`` for the first ``m(k)`` (``m(k)`` = top arms still to
    find) and ``mean_sigma(m(k)) - mean`` for the others, the arm with the largest gap
    is deactivated, and it is accepted iff its mean exceeds ``mean_sigma(m(k) + 1)``.

    Why this class is exactly :class:`agents.elimination.nsar.NSAR` with ``p = 1``: NSAR's
    ``C_1 = 2^-1 + sum_{r=2..K} r^-1`` is ``log-bar(K)`` term for term, so
    ``n_r = ceil((T - K) / (C_1 (K - r + 1)))`` is SAR's ``n_k`` with ``k = r``; the
    sampling step and the accept/reject rule of Fig. 1 are SAR's, symbol for symbol.
    ``tests/test_agents_shahrampour.py`` checks the schedule against exact rational
    arithmetic and that ``NSAR(p=1)`` makes the same pulls and answer as ``SAR`` for
    the same seed.

    Args:
        seed: seed of the tie-breaking generator. There is no ``p``: it is 1.

    Settings: fixed budget only.

    Departures from the paper: the same as :class:`~agents.elimination.nsar.NSAR` (stop once the
    answer is determined, random tie-breaking, ``current_answer`` on truncation).
    """

    name = "sar"

    def __init__(self, *, seed: int | None = None) -> None:
        super().__init__(p=1.0, seed=seed)

    def __repr__(self) -> str:
        return f"SAR(seed={self.seed})"
