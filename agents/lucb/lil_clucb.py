"""lil'CLUCB (Jiang, Li, Qiao 2017, Algorithm 2, Appendix C)."""

from __future__ import annotations

from agents.lucb.family import RULE_CLUCB, LilFamily

__all__ = ["LilCLUCB"]


class LilCLUCB(LilFamily):
    """lil'CLUCB: CLUCB (Chen et al. 2014) for best-K with the lil' confidence bound.

    Paper:
        Haotian Jiang, Jian Li, Mingda Qiao. "Practical algorithms for best-K
        identification in multi-armed bandits". arXiv:1705.06894 (2017), Sec. 4.1 and
        Appendix C, Algorithm 2 (lil'CLUCB); guarantee Theorem 4.1; experiments Sec. 5.

    Algorithm 2: pull every arm once; then each round ``M`` = the ``K`` largest empirical
    means; radius ``u_i = U(T_i, delta/N)`` for every arm; revised mean
    ``mean_i - u_i`` for ``i`` in ``M``, ``mean_i + u_i`` otherwise; ``M~`` = the ``K``
    largest revised means; stop and return ``M`` if ``M = M~``; otherwise pull the arm of
    largest radius in the symmetric difference ``M (+) M~``.

    Implementation (exact, O(log N) heap operations per round whatever ``m``): with
    ``a_1 <= a_2 <= ...`` the lower bounds in ``M`` and ``b_1 >= b_2 >= ...`` the upper
    bounds outside ``M``, ``M~`` swaps in exactly the pairs ``j`` with ``b_j > a_j`` (a
    prefix ``j <= m``, as ``b`` decreases and ``a`` increases). So ``M = M~`` iff
    ``m = 0`` iff ``LCB_h >= UCB_l`` (the LUCB stop rule of :mod:`agents.lucb.family`),
    and ``M (+) M~`` is the first ``m`` arms of each order. The kernel keeps those ``2m``
    arms split off the two bound heaps, plus a heap of them by radius whose top is the
    arm to pull; after each pull it restores the split and moves ``m`` by comparing heap
    tops (:func:`agents.lucb.family._clucb_settle`).

    Theorem 4.1: correct with probability at least ``1 - c_eps delta^(1+eps) / N^eps``.

    Args:
        delta: target error probability ``nu``, in (0, 1). Default 0.01 (Sec. 5).
        variant: ``"faithful"`` (default): ``eps = 0.01`` and lil' ``delta`` such that
            Theorem 4.1's bound equals ``nu``; ``"heuristic"``: ``eps = 0``, lil'
            ``delta = nu``.
        eps: the LIL bound's ``epsilon``; ``None``: the variant's default.
        seed: seed of the tie-breaking generator.

    Settings: fixed confidence (exact top-K) and fixed budget (anytime: current ``M``);
    any ``batch_size``/``repeat_limit``.

    Departures from the paper, and why:

    * Ties: equal revised means count as "not swapped" (``M = M~`` when ``LCB_h = UCB_l``,
      the same rule as lil'RandLUCB's ``>=``); equal means and equal radii are broken
      uniformly at random (paper-notes). The paper is silent on ties.
    * ``eps`` of the faithful variant (not given in the paper): 0.01; the lil' bound is
      Sec. 5's (``+ 2`` inside the inner log), see :class:`agents.lucb.lil_rand_lucb.LilRandLUCB`.
    """

    name = "lil_clucb"
    rule = RULE_CLUCB
    guarantee = "union"

    def _widths(self, n: int, k: int, lil_delta: float) -> tuple[float, float]:
        return lil_delta / n, lil_delta / n
