"""lil'LUCB (Jamieson & Nowak 2014), generalised to top-k as Jiang et al. (2017) run it."""

from __future__ import annotations

from agents.lucb.family import RULE_BOTH, LilFamily

__all__ = ["LilLUCB"]


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
    their experiments; ties are broken at random (paper-notes).
    """

    name = "lil_lucb"
    rule = RULE_BOTH
    guarantee = "union"

    def _widths(self, n: int, k: int, lil_delta: float) -> tuple[float, float]:
        return lil_delta / n, lil_delta / n
