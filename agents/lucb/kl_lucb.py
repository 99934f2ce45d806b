"""KL-LUCB (Kaufmann & Kalyanakrishnan 2013): LUCB with KL (Chernoff) confidence bounds."""

from __future__ import annotations

import math

import numpy as np

from agents.base import check_probability
from agents.engine import confidence
from agents.lucb.family import LUCBFamily
from agents.lucb.layout import RADIUS_KL, RULE_BOTH
from bandit_envs import divergences
from bandit_envs.problem import Problem

__all__ = ["KLLUCB"]

#: ``rate`` values: Theorem 3's exploration rate, or the practical one.
RATES = ("theorem3", "practical")
_RATE_CODES = {"theorem3": confidence.KL_RATE_THEOREM3, "practical": confidence.KL_RATE_PRACTICAL}


class KLLUCB(LUCBFamily):
    """KL-LUCB: LUCB's sampling and stopping with KL confidence bounds.

    Paper:
        Emilie Kaufmann, Shivaram Kalyanakrishnan. "Information complexity in bandit
        subset selection". COLT 2013, JMLR W&CP 30: 228-251. KL-LUCB is "the instance
        of" LUCB (their Algorithm 2, p. 232) "that use[s] u_a(t) and l_a(t) as
        confidence bounds" (Sec. 3, eq. 4-5, p. 233); exploration rate of Theorem 1
        (p. 234) and Theorem 3 (p. 235); constants of Sec. 5 (p. 239).

    Formula used: pull every arm once; then at round ``t = 1, 2, ...``: ``High`` = the
    ``k`` largest empirical means (the paper's ``J(t)``), ``Low`` = the rest;
    ``UCB_i = max {q >= mean_i : T_i d(mean_i, q) <= beta(t, delta)}`` and
    ``LCB_i = min {q <= mean_i : T_i d(mean_i, q) <= beta(t, delta)}`` (eq. 4-5);
    ``h = argmin_{High} LCB``, ``l = argmax_{Low} UCB`` (eq. 2, p. 231: ``l_t`` and
    ``u_t``); from round 2 on, stop and answer ``High`` when ``UCB_l - LCB_h <
    epsilon``; else pull ``h`` and ``l`` (one round = two pulls).
    ``d`` is the Bernoulli KL divergence for Bernoulli and categorical rewards (in [0,
    1]; it bounds the moment generating function of any [0, 1] reward, Garivier & Cappé
    2011) and the Gaussian one ``(p - q)^2 / (2 sigma^2)`` with the known ``sigma`` for
    Gaussian rewards (:mod:`bandit_envs.divergences`; the bounds are its
    :func:`~bandit_envs.divergences.kl_upper` / :func:`~bandit_envs.divergences.kl_lower`).
    Exploration rates (:func:`agents.engine.confidence.kl_rate`):

    * ``rate="theorem3"`` (default): ``beta(t, delta) = log(k1 K t^alpha / delta) +
      log log(k1 K t^alpha / delta)`` (``K = n`` arms) with ``alpha = 1.1``, ``k1 =
      405.5``: ``(epsilon, k, delta)``-PAC. Theorem 1: "the (KL)-LUCB algorithm using
      beta(t, delta) = log(k1 K t^alpha / delta) + log log(k1 K t^alpha / delta), with
      alpha > 1 and k1 > 2e + 1 + e/(alpha - 1) + (e + 1)/(alpha - 1)^2, [is] correct
      with probability at least 1 - delta"; Theorem 3 bounds the sample complexity at
      the same rate. Sec. 5: "(KL-)LUCB ... with alpha = 1.1, k1 = 405.5" (the
      condition gives 405.4 at ``alpha = 1.1``).
    * ``rate="practical"``: ``beta(t, delta) = log((1 + log t) / delta)``, a smaller
      rate without guarantee. Not from this paper: its only unproven rate is
      "KL-LUCB-log(t), a version of KL-LUCB with an exploration rate of log(t)", for
      the fixed-budget experiment (Sec. 5, p. 239); ``log((log t + 1) / delta)`` is
      the threshold Garivier & Kaufmann (2016) suggest for GLR stopping.

    Args:
        delta: target error probability, in (0, 1). Default 0.01 (as the family).
        epsilon: PAC tolerance ``>= 0``; 0 (default) identifies the exact top-k (stop
            rule then ``LCB_h > UCB_l``).
        rate: ``"theorem3"`` (default) or ``"practical"``, see above.
        alpha: exponent of ``t`` in Theorem 3's rate, ``> 1``. Default 1.1.
        k1: constant of Theorem 3's rate, ``> 0`` (the theorem needs the bound above).
            Default 405.5.
        seed: seed of the tie-breaking generator.

    Settings: fixed confidence and fixed budget (anytime: current ``High``); any
    ``batch_size``/``repeat_limit`` (the pair is one request). Bernoulli and Gaussian
    rewards, and categorical rewards whose support lies in [0, 1] (``reset`` raises
    ``ValueError`` otherwise).

    Checked against the paper's text (PMLR v30 PDF): eq. (2), (4), (5), Algorithm 2,
    Theorems 1 and 3, the constants of Sec. 5, as quoted above; ``t`` is Algorithm 2's
    "number of stage of the algorithm", 1 after the initial pull of every arm, one
    stage per pair of pulls (as here). Algorithm 2 starts with "B(1) = inf (stopping
    index)": the stop rule is first checked after the first round, so an episode
    pulls at least ``n + 2`` times (checked at ``t = 1`` too, the rule would stop after
    the ``n`` initial pulls on instances whose gaps are wide against ``sigma``).

    Departures from the paper, and why:

    * The stop inequality: Algorithm 2 loops "while B(t) > epsilon" (stop at ``B(t)
      <= epsilon``), its text calls the stopping criterion "B(t) < epsilon"; this
      follows the text (and LUCB1 here): stop at ``B(t) < epsilon``. The two differ
      only when ``B(t) = epsilon`` exactly.
    * Ties are broken uniformly at random; the paper does not say.
    * The bounds are bisections to ``2^-50`` (:mod:`bandit_envs.divergences`), with
      Bernoulli means clamped to ``[1e-15, 1 - 1e-15]`` inside the logarithms.
    * Speed: ``beta(t, delta)`` grows with ``t``, so every bound changes every round;
      ``h`` and ``l`` are found exactly by a lazy scheme (epochs of rounds with heap keys
      at the epoch's largest rate, a best-first walk computing exact bounds;
      :mod:`agents.lucb.kl_bounds`), not by recomputing all ``n`` bounds per
      round. ``tests/test_agents_klucb_ugape.py`` checks it against the literal loop.
      Bernoulli arms with equal (mean, count) are one entry of the heaps (a class).
      Pulls per second at n = 1000 (budget 20n, one core): about 1.2M for Bernoulli
      rewards (most rounds decide ``h``, ``l`` and the stop rule from divergence
      comparisons proved against the rounding error, without computing a bound; the
      rest pay root-findings of 0.4-0.8 us each); figures for both families are on the
      performance page (``benchmarks/agent_speed.py``).
    """

    name = "kl_lucb"
    rule = RULE_BOTH

    def __init__(
        self,
        delta: float = 0.01,
        epsilon: float = 0.0,
        rate: str = "theorem3",
        alpha: float = 1.1,
        k1: float = 405.5,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        check_probability("delta", delta)
        if not (isinstance(epsilon, (int, float)) and epsilon >= 0.0):
            raise ValueError(f"epsilon={epsilon!r} must be >= 0 (PAC tolerance)")
        if rate not in RATES:
            raise ValueError(f"rate={rate!r} must be one of {list(RATES)}")
        if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha > 1.0):
            raise ValueError(f"alpha={alpha!r} must be > 1 (Theorem 3)")
        if not (isinstance(k1, (int, float)) and math.isfinite(k1) and k1 > 0.0):
            raise ValueError(f"k1={k1!r} must be > 0")
        self.delta = float(delta)
        self.epsilon = float(epsilon)
        self.rate = rate
        self.alpha = float(alpha)
        self.k1 = float(k1)

    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode; the rewards must suit a KL divergence (see :meth:`family`)."""
        super().reset(problem, seed=seed)
        self.family()

    def family(self) -> int:
        """The divergence family (``bandit_envs.divergences`` code) of this episode's rewards."""
        p = self.problem
        fam = divergences.family_code(p.distribution)
        if fam == divergences.BERNOULLI and (p.reward_low < 0.0 or p.reward_high > 1.0):
            raise ValueError(
                f"kl_lucb: rewards in [{p.reward_low}, {p.reward_high}] must lie in [0, 1] "
                "for the Bernoulli KL bounds"
            )
        return fam

    def params(self) -> np.ndarray:
        """``prm``: the KL bounds (family, rate, ``delta``, ``k1``, ``alpha``) and stop rule."""
        return self._prm(
            stop_eps=self.epsilon,
            radius=RADIUS_KL,
            delta=self.delta,
            k1=self.k1,
            alpha=self.alpha,
            family=self.family(),
            rate=_RATE_CODES[self.rate],
            first_round=1.0,
        )
