"""The LUCB family with the lil' confidence bound: lil'LUCB, LUCB++, lil'RandLUCB, lil'CLUCB.

The four differ only in the widths of the two sides' bounds and the sampling rule;
the skeleton, :class:`agents.lucb.family.LilFamily`, plays them all.
"""

from __future__ import annotations

from agents.lucb.family import LilFamily
from agents.lucb.layout import RULE_BOTH, RULE_CLUCB, RULE_RANDOM

__all__ = ["LUCBPlusPlus", "LilCLUCB", "LilLUCB", "LilRandLUCB"]


class LilLUCB(LilFamily):
    """lil'LUCB: LUCB1's sampling and stopping with the lil' confidence bound.

    Paper:
        Kevin Jamieson, Robert Nowak. "Best-arm identification algorithms for
        multi-armed bandits in the fixed confidence setting". CISS 2014 (lil'LUCB,
        K = 1). Generalised to best-K as described by Jiang, Li, Qiao, "Practical
        algorithms for best-K identification in multi-armed bandits" (2017), Sec. 1
        (footnote 2) and Sec. 5.

    Formula used: LUCB (Kalyanakrishnan et al. 2012) with the lil' radius
    ``U(T_i, delta/N)`` for every arm (a union bound over the ``N`` arms of Lemma 2.1):
    ``High`` = the ``k`` largest empirical means, ``h = argmin_{High} mean - U``,
    ``l = argmax_{Low} mean + U``; stop and answer ``High`` when ``LCB_h >= UCB_l``, else
    pull both ``h`` and ``l``. This is the radius for which Jiang et al. note that
    LUCB++ "coincides with lil'LUCB when K = N/2" (``delta/(2(N-K)) = delta/(2K) = delta/N``).
    Proven error bound (union over the N arms): ``N c_eps (delta/N)^(1+eps) =
    c_eps delta^(1+eps) / N^eps``, which the faithful variant sets to ``nu``.

    Args:
        delta: target error probability ``nu``, in (0, 1). Default 0.01 (jiang2017 Sec. 5).
        variant: ``"faithful"`` (default; ``eps = 0.01``, lil' ``delta`` from the bound
            above) or ``"heuristic"`` (``eps = 0``, lil' ``delta = nu``).
        eps: the LIL bound's ``epsilon``; ``None``: the variant's default.
        seed: seed of the tie-breaking generator.

    Settings: fixed confidence (exact top-k) and fixed budget (anytime: current
    ``High``); any ``batch_size``/``repeat_limit``.

    Departures: ``U`` is jiang2017's Sec. 5 bound (``+ 2`` inside the inner log), as in
    their experiments; ties are broken at random (the paper does not say).
    """

    name = "lil_lucb"
    rule = RULE_BOTH
    guarantee = "union"

    def _widths(self, n: int, k: int, lil_delta: float) -> tuple[float, float]:
        return lil_delta / n, lil_delta / n


class LUCBPlusPlus(LilFamily):
    """LUCB++: LUCB with asymmetric anytime confidence levels for the two sides.

    Paper:
        Max Simchowitz, Kevin Jamieson, Benjamin Recht. "The simulator: understanding
        adaptive sampling in the moderate-confidence regime". COLT 2017
        (arXiv:1702.05186), algorithm LUCB++. As run by Jiang, Li, Qiao, "Practical
        algorithms for best-K identification in multi-armed bandits" (2017), Sec. 5.

    Formula used: LUCB (Kalyanakrishnan et al. 2012) with the anytime bound
    ``U(T_i, delta/(2(n-k)))`` for the lower bound of the arms in ``High`` (the ``k``
    largest empirical means) and ``U(T_i, delta/(2k))`` for the upper bound of the arms
    in ``Low``; ``h = argmin_{High} LCB``, ``l = argmax_{Low} UCB``; stop and answer
    ``High`` when ``LCB_h >= UCB_l``, else pull both ``h`` and ``l``. These are the
    radii Jiang et al. say lil'RandLUCB takes from LUCB++ (their Sec. 3 and footnote 4;
    also Jamieson's public LUCB++ code). ``U`` is Jiang et al.'s lil' bound (Sec. 5),
    the bound they run every lil'-based baseline with; its error bound is the one of
    lil'RandLUCB (same union over the arms): ``c_eps delta``.

    Args:
        delta: target error probability ``nu``, in (0, 1). Default 0.01 (jiang2017 Sec. 5).
        variant: ``"faithful"`` (default; ``eps = 0.01``, lil' ``delta = nu / c_eps``) or
            ``"heuristic"`` (``eps = 0``, lil' ``delta = nu``), as in jiang2017 Sec. 5.
        eps: the LIL bound's ``epsilon``; ``None``: the variant's default.
        seed: seed of the tie-breaking generator.

    Settings: fixed confidence (exact top-k) and fixed budget (anytime: current
    ``High``); any ``batch_size``/``repeat_limit`` (the pair is one request).

    Departures: SJR17 state LUCB++ for a generic anytime bound; we use jiang2017's
    lil' bound ``U`` (with the ``+ 2``) so that the comparison of Jiang et al.'s Fig. 1
    is reproduced like for like. Ties are broken at random (the paper does not say).
    """

    name = "lucb_pp"
    rule = RULE_BOTH
    guarantee = "theorem_3_1"

    def _widths(self, n: int, k: int, lil_delta: float) -> tuple[float, float]:
        return lil_delta / (2.0 * (n - k)), lil_delta / (2.0 * k)


class LilRandLUCB(LilFamily):
    """lil'RandLUCB: LUCB with lil' bounds that pulls ``h`` or ``l`` at random.

    Paper:
        Haotian Jiang, Jian Li, Mingda Qiao. "Practical algorithms for best-K
        identification in multi-armed bandits". arXiv:1705.06894 (2017), Sec. 3,
        Algorithm 1 (lil'RandLUCB); guarantee Theorem 3.1; experiments Sec. 5.

    Algorithm 1: pull every arm once; then each round ``High`` = the ``K`` largest
    empirical means, ``Low`` = the rest; radius ``U(T_i, delta/(2(N-K)))`` for arms in
    ``High`` and ``U(T_i, delta/(2K))`` for arms in ``Low`` (``U`` as in Sec. 5, with
    the ``+ 2`` inside the inner log); ``h = argmin_{High} mean - radius``,
    ``l = argmax_{Low} mean + radius``; stop and return ``High`` if
    ``LCB_h >= UCB_l``; otherwise pull ``h`` with probability ``T_l / (T_h + T_l)``,
    else ``l`` (the less-pulled arm is favoured).

    Theorem 3.1: with probability at least ``1 - c_eps delta`` the answer is correct
    (``c_eps`` of Lemma 2.1).

    Args:
        delta: target error probability (the paper's ``nu``), in (0, 1). Default 0.01
            (Sec. 5).
        variant: ``"faithful"`` (default): ``eps = 0.01`` and lil' ``delta = nu / c_eps``
            so that Theorem 3.1's bound equals ``nu``; ``"heuristic"``: ``eps = 0``,
            lil' ``delta = nu`` (Sec. 5.1, no guarantee).
        eps: the ``epsilon`` of the LIL bound (not a PAC tolerance); ``None``: the
            variant's default. Faithful: in (0, 1); heuristic: in [0, 1).
        seed: seed of the agent's generator (coin flips and tie-breaking).

    Settings: fixed confidence (exact top-K; ``delta``), and fixed budget as an anytime
    algorithm (the answer when the budget ends is the current ``High``). Any
    ``batch_size``/``repeat_limit``: each round is one request of one pull.

    Departures from the paper, and why:

    * Ties between equal empirical means (``High``) or equal bounds (``h``, ``l``) are
      broken uniformly at random, by a random key per arm redrawn when
      its statistics change (see :mod:`agents.lucb.family`); the paper is silent.
    * ``eps`` of the faithful variant: the paper does not give it; 0.01, as in
      Jamieson et al. (2014)'s experiments (see :class:`agents.lucb.family.LilFamily`).
    * The lil' bound is Sec. 5's (``log((1 + eps) t + 2)``), not Lemma 2.1's
      ``log((1 + eps) t)``, as in the paper's experiments; it is wider, so the
      guarantee still holds.
    """

    name = "lil_rand_lucb"
    rule = RULE_RANDOM
    guarantee = "theorem_3_1"

    def _widths(self, n: int, k: int, lil_delta: float) -> tuple[float, float]:
        return lil_delta / (2.0 * (n - k)), lil_delta / (2.0 * k)


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
    tops (:func:`agents.lucb.clucb_split.settle`).

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
      uniformly at random. The paper is silent on ties.
    * ``eps`` of the faithful variant (not given in the paper): 0.01; the lil' bound is
      Sec. 5's (``+ 2`` inside the inner log), see :class:`agents.lucb.lil.LilRandLUCB`.
    """

    name = "lil_clucb"
    rule = RULE_CLUCB
    guarantee = "union"

    def _widths(self, n: int, k: int, lil_delta: float) -> tuple[float, float]:
        return lil_delta / n, lil_delta / n
