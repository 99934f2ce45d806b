"""lil'RandLUCB (Jiang, Li, Qiao 2017, Algorithm 1)."""

from __future__ import annotations

from agents.lucb.family import RULE_RANDOM, LilFamily

__all__ = ["LilRandLUCB"]


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
      broken uniformly at random (paper-notes), by a random key per arm redrawn when
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
