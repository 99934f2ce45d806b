"""LUCB++ (Simchowitz, Jamieson, Recht 2017), with Jiang et al.'s lil' bound."""

from __future__ import annotations

from agents.lucb.family import RULE_BOTH, LilFamily

__all__ = ["LUCBPlusPlus"]


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
    is reproduced like for like. Ties are broken at random (paper-notes).
    """

    name = "lucb_pp"
    rule = RULE_BOTH
    guarantee = "theorem_3_1"

    def _widths(self, n: int, k: int, lil_delta: float) -> tuple[float, float]:
        return lil_delta / (2.0 * (n - k)), lil_delta / (2.0 * k)
