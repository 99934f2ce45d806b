"""Successive Rejects (Audibert, Bubeck, Munos 2010): SAR for the best arm."""

from __future__ import annotations

from agents.elimination.sar import SAR

__all__ = ["SuccessiveRejects"]


class SuccessiveRejects(SAR):
    """Successive Rejects: fixed-budget best-arm identification.

    Paper:
        Jean-Yves Audibert, Sebastien Bubeck, Remi Munos. "Best arm identification in
        multi-armed bandits". COLT 2010, Sec. 3 (SR): ``log-bar(K) = 1/2 + sum_{i=2..K}
        1/i``, ``n_k = ceil((T - K) / (log-bar(K) (K + 1 - k)))``; in phase ``k`` every
        surviving arm gets ``n_k - n_{k-1}`` more pulls, then the arm of lowest empirical
        mean is rejected; the last arm is the answer.

    Why it is :class:`~agents.elimination.sar.SAR` with ``k = 1``: SAR (Bubeck, Wang, Viswanathan 2013)
    is built on SR's phases (the same ``n_k``); with one arm to find, the arm of largest
    empirical gap is the one of lowest mean (its gap ``mean_1 - mean_i`` is the largest),
    so SAR rejects exactly SR's arm. They differ only when every surviving arm but the
    leader ties with it in gap (all of them at the same mean): SAR may then accept the
    leader and stop before the last phase, with the same answer and fewer pulls.
    ``tests/test_classic_agents.py`` checks the phases and the rejections against an
    independent implementation of SR on tie-free instances.

    Settings: fixed budget, k = 1.
    """

    name = "successive_rejects"
    k_values = frozenset({1})

    def __repr__(self) -> str:
        return f"SuccessiveRejects(seed={self.seed})"
