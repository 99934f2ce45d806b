"""lil'CLUCB (Jiang, Li, Qiao 2017, Algorithm 2, Appendix C)."""

from __future__ import annotations

import heapq

import numpy as np

from agents.lucb_common import LilFamily

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

    Implementation (exact, O((m + 1) log N) per round for a difference of ``2m`` arms):
    with ``a_1 <= a_2 <= ...`` the lower bounds in ``M`` and ``b_1 >= b_2 >= ...`` the
    upper bounds outside ``M``, ``M~`` swaps in exactly the pairs ``j`` with ``b_j > a_j``
    (a prefix, as ``b`` decreases and ``a`` increases). So ``M = M~`` iff
    ``LCB_h >= UCB_l`` (the LUCB stop rule of :mod:`agents.lucb_common`), and
    ``M (+) M~`` is read off the two bound heaps in lockstep.

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
      Sec. 5's (``+ 2`` inside the inner log), see :class:`agents.lil_rand_lucb.LilRandLUCB`.
    """

    name = "lil_clucb"
    choice = None
    guarantee = "union"

    def _widths(self, n: int, k: int, lil_delta: float) -> tuple[float, float]:
        return lil_delta / n, lil_delta / n

    #: pairs walked on the heaps before switching to the vectorised search.
    lockstep_max = 24

    def _choose(self, h: int, l: int) -> tuple[int, ...]:  # noqa: E741
        """The arm of largest radius in ``M (+) M~`` (see the class docstring)."""
        hl, lu, ver = self._hl, self._lu, self._ver
        la, ub, tbs = self._la, self._ub, self._tb
        popped_h: list[tuple] = []
        popped_l: list[tuple] = []
        best, best_rad, best_tb = -1, -1.0, 2.0
        overflow = False
        while True:
            while hl and hl[0][3] != ver[hl[0][2]]:
                heapq.heappop(hl)
            while lu and lu[0][3] != ver[lu[0][2]]:
                heapq.heappop(lu)
            if not (hl and lu) or not -lu[0][0] > hl[0][0]:
                break  # no pair left, or UCB of the j-th Low arm <= LCB of the j-th High arm
            if len(popped_h) == self.lockstep_max:
                overflow = True
                break
            eh = heapq.heappop(hl)
            el = heapq.heappop(lu)
            popped_h.append(eh)
            popped_l.append(el)
            for i, rad in ((eh[2], la[eh[2]]), (el[2], ub[el[2]])):
                tb = tbs[i]
                if rad > best_rad or (rad == best_rad and tb < best_tb):
                    best, best_rad, best_tb = i, rad, tb
        for e in popped_h:
            heapq.heappush(hl, e)
        for e in popped_l:
            heapq.heappush(lu, e)
        if overflow:
            return (self._choose_vectorised(),)
        return (best,)

    def _choose_vectorised(self) -> int:
        """The same choice as the heap walk, in numpy: for large differences (K ~ N/2).

        Sorts High by (LCB, key) and Low by (-UCB, key), the heaps' orders; the pairs
        with ``UCB_j > LCB_j`` form a prefix of length ``m``; the answer is the largest
        radius among those ``2m`` arms, ties to the smallest key.
        """
        mean = np.array(self._m)
        tb = np.array(self._tb)
        high = np.array(self._side, dtype=bool)
        rad_low, rad_up = np.array(self._la), np.array(self._ub)
        lcb = mean - rad_low  # valid for High arms (the heaps' keys, bit for bit)
        ucb = mean + rad_up  # valid for Low arms
        hi = np.flatnonzero(high)
        lo = np.flatnonzero(~high)
        hi = hi[np.lexsort((tb[hi], lcb[hi]))]
        lo = lo[np.lexsort((tb[lo], -ucb[lo]))]
        size = min(hi.shape[0], lo.shape[0])
        m = int(np.count_nonzero(ucb[lo[:size]] > lcb[hi[:size]]))
        cand = np.concatenate((hi[:m], lo[:m]))
        rad = np.where(high[cand], rad_low[cand], rad_up[cand])
        ties = cand[rad == rad.max()]
        return int(ties[np.argmin(tb[ties])])
