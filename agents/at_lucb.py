"""AT-LUCB: anytime LUCB for top-k identification (Jun & Nowak, ICML 2016)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Generator

import numpy as np

from agents.base import (
    FIXED_BUDGET,
    FIXED_CONFIDENCE,
    Pull,
    PullOne,
    Request,
    ScriptedAgent,
    check_probability,
)
from bandit_envs.scoring import top_k

__all__ = ["ATLUCB"]


class ATLUCB(ScriptedAgent):
    """AnyTime Lower and Upper Confidence Bound: LUCB1 with a confidence level that decays.

    Paper:
        Kwang-Sung Jun, Robert Nowak. "Anytime exploration for multi-armed bandits
        using confidence information". ICML 2016 (PMLR 48:974-982), Algorithm AT-LUCB.
        Its confidence bound is LUCB1's: Shivaram Kalyanakrishnan, Ambuj Tewari, Peter
        Auer, Peter Stone. "PAC subset selection in stochastic multi-armed bandits".
        ICML 2012, Sec. 3. Shahrampour & Tarokh (2017, Sec. IV) run it in fixed budget
        "with the parameters as instructed in [Jun & Nowak]".

    Formulas used (the paper could not be read here; this is the published definition
    as we know it, cross-checked against public re-implementations for the defaults):

    * ``beta(u, t, delta) = sqrt(log(k1 n t^4 / delta) / (2u))``, ``k1 = 5/4``, for
      rewards in [0, 1] (:func:`agents.confidence.lucb_beta`, which scales it by
      ``2 sigma`` for sigma-sub-Gaussian rewards); ``L_i = mean_i - beta(T_i, t, delta)``,
      ``U_i = mean_i + beta(T_i, t, delta)``.
    * ``High^t`` = the ``k`` largest empirical means, ``Low^t`` = the rest;
      ``h*_t(delta) = argmin_{i in High^t} L_i``, ``l*_t(delta) = argmax_{i in Low^t} U_i``;
      ``Term(t, delta, eps)``: ``U_{l*} - L_{h*} < eps``.
    * ``delta_s = delta_1 alpha^(s - 1)``, ``S(0) = 1``. At each time ``t``: if
      ``Term(t, delta_{S(t-1)}, eps)`` then ``S(t)`` is the smallest ``s > S(t-1)`` with
      not ``Term(t, delta_s, eps)`` and ``J(t) = High^t``; else ``S(t) = S(t-1)`` and
      ``J(t) = High^t`` if ``S(t) = 1``, ``J(t - 1)`` otherwise. Then pull
      ``h*_t(delta_{S(t)})`` and ``l*_t(delta_{S(t)})``. The output at time ``t`` is
      ``J(t)``.

    ``Term`` is monotone in ``delta`` (a smaller delta widens every interval), so
    ``S(t)`` is found by doubling and bisection instead of stepping ``s`` one by one
    (the same ``S(t)``, in O(log) evaluations).

    Args:
        delta_1: initial confidence level ``delta_1``, in (0, 1). Default 0.5.
        alpha: decay factor of the confidence level, in (0, 1). Default 0.99.
        epsilon: tolerance ``eps >= 0`` of ``Term``. Default 0 (exact top-k).
        delta: fixed confidence only: the target error probability, in (0, 1).
            Default 0.1.
        k1: LUCB1's constant ``k1 >= 1`` in ``beta``. Default 5/4 (Kalyanakrishnan
            et al. 2012, the value for which their union bound gives ``delta``).
        seed: seed of the tie-breaking generator.

    The defaults ``delta_1 = 0.5``, ``alpha = 0.99``, ``eps = 0`` are the values we
    attribute to Jun & Nowak's experiments. They could not be checked against the
    paper's text here; the public AT-LUCB re-implementation in Libin et al.'s BFTS
    code ("Bayesian anytime m-top exploration") uses the same values. At the budgets
    of Shahrampour & Tarokh's Fig. 2 (T = H1) the certification did not trigger in our
    checks (``S`` stayed 1): ``J(t) = High^t``, ``alpha`` played no part and
    ``delta_1`` entered only through the widths ``beta(., t, delta_1)`` of the sampling.

    Settings:

    * fixed budget (anytime, as Shahrampour & Tarokh use it): it runs until the budget
      ends and answers with ``J`` updated with the last statistics
      (:meth:`current_answer`).
    * fixed confidence: it stops at the first ``t`` at which ``Term(t, delta, eps)``
      holds and answers ``High^t``. This is LUCB1's stopping rule at level ``delta``
      on AT-LUCB's sampling: with ``eps = 0``, the error probability is at most
      ``delta zeta(3) / k1 < delta`` (one-sided Hoeffding per arm, union over arms,
      ``u <= t`` and ``t``, as in Kalyanakrishnan et al.'s Lemma 2). With ``eps > 0`` the
      answer is only ``eps``-good (every returned arm is above ``mu_(k) - eps``).

    Departures from the paper, and why:

    * The initial round pulls every arm once (``t = 1``): ``beta`` is infinite at
      ``u = 0``. ``t`` then counts rounds (two pulls each), as in LUCB1, so every arm
      has ``T_i <= t`` (what the union bound needs).
    * In fixed budget the answer at the end is ``J(t + 1)``: the ``J`` update is run
      once more on the final statistics (the anytime output after the last pulls).
    * Ties (``High^t``, ``h*``, ``l*``) are broken uniformly at random with ``self.rng``.
    * Batches: a round is one :class:`~agents.base.Pull` of ``{h*, l*}`` once each; with
      ``batch_size=1`` it is two one-pull steps (two :class:`~agents.base.PullOne`,
      in the order the base's RoundRobin would give; the decisions are made before
      either pull, as in the paper).
    """

    name = "at_lucb"
    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})

    def __init__(
        self,
        delta_1: float = 0.5,
        alpha: float = 0.99,
        epsilon: float = 0.0,
        delta: float = 0.1,
        k1: float = 1.25,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        for nm, v in (("delta_1", delta_1), ("alpha", alpha), ("delta", delta)):
            check_probability(nm, v)
        if not _real(epsilon) or not (0.0 <= float(epsilon) < math.inf):
            raise ValueError(f"epsilon={epsilon!r} must be a finite number >= 0")
        if not _real(k1) or not (1.0 <= float(k1) < math.inf):
            raise ValueError(f"k1={k1!r} must be a finite number >= 1")
        self.delta_1 = float(delta_1)
        self.alpha = float(alpha)
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.k1 = float(k1)

    def __repr__(self) -> str:
        return (
            f"ATLUCB(delta_1={self.delta_1}, alpha={self.alpha}, epsilon={self.epsilon}, "
            f"delta={self.delta}, seed={self.seed})"
        )

    # ------------------------------------------------------------------ state
    def reset(self, problem, *, seed=None) -> None:  # noqa: D102 (documented in the base)
        super().reset(problem, seed=seed)
        self.S = 1
        self.J: np.ndarray | None = None
        self.t = 0
        self._high: np.ndarray | None = None
        self._low = np.ones(problem.n_arms, dtype=bool)
        self._updated_at = -1  # total_pulls at the last J update

    def current_answer(self) -> np.ndarray:
        """``J`` after one more update on the latest statistics (see the class docstring)."""
        if self.counts.min() == 0:  # stopped inside the initial round
            return super().current_answer()
        if self.total_pulls != self._updated_at:
            self._update(self.t + 1)
        return self.J

    # -------------------------------------------------------------- algorithm
    def _widths(self, t: int, delta: float) -> np.ndarray:
        """``beta(T_i, t, delta)`` for every arm: :func:`~agents.confidence.lucb_beta`.

        Inlined for speed (every arm has been pulled, so no ``inf`` guard is needed);
        the float operations are the same, so the values are bit-identical (tested).
        """
        rate = np.log(self.k1 * self.problem.n_arms * max(float(t), 1.0) ** 4 / delta)
        return 2.0 * self.problem.sigma * np.sqrt(rate / (2.0 * self.counts))

    def _gap(self, w: np.ndarray, low: np.ndarray) -> float:
        """``U_{l*} - L_{h*}`` for widths ``w``; ``low`` is the mask of ``Low^t``."""
        mu = self.means
        return float((mu[low] + w[low]).max() - (mu[~low] - w[~low]).min())

    def _delta_s(self, s: int) -> float:
        return self.delta_1 * self.alpha ** (s - 1)

    def _term(self, t: int, s: int, low: np.ndarray) -> bool:
        return self._gap(self._widths(t, self._delta_s(s)), low) < self.epsilon

    def _update(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``S(t)``/``J(t)`` lines of AT-LUCB at time ``t``.

        Returns the ``Low^t`` mask and the widths at ``delta_{S(t)}``.
        """
        self.t = t
        self._updated_at = self.total_pulls
        mu = self.means
        low = self._low
        if self._high is not None and mu[~low].min() > mu[low].max():
            # High^t unchanged: top_k would return it without drawing (no tie at the
            # boundary), so skipping it changes neither the answer nor the generator.
            high = self._high
        else:
            high = top_k(mu, self.problem.k, self.rng)
            low = np.ones(self.problem.n_arms, dtype=bool)
            low[high] = False
            self._low = low
            self._high = high
        s0 = self.S
        w = self._widths(t, self._delta_s(s0))
        if self._gap(w, low) < self.epsilon:
            # S(t) = the smallest s > s0 with not Term(t, delta_s): Term holds at s0 and
            # is monotone in s (true up to some s*, false beyond), so double, then bisect.
            lo, step = s0, 1
            hi = s0 + step
            while self._term(t, hi, low):
                lo, step = hi, step * 2
                hi = s0 + step
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if self._term(t, mid, low):
                    lo = mid
                else:
                    hi = mid
            self.S = hi
            self.J = high
            w = self._widths(t, self._delta_s(hi))
        elif self.S == 1 or self.J is None:
            self.J = high
        return low, w

    def _run(self) -> Generator[Request, None, np.ndarray]:
        n = self.problem.n_arms
        yield from self._each_once(np.arange(n))
        t = 1
        fixed_conf = not self.problem.fixed_budget
        rng = self.rng
        counts = self.counts
        serial = self.problem.batch_size == 1
        single: list[PullOne | None] = [None] * n  # one cached request per arm
        while True:
            low, w = self._update(t)
            if fixed_conf and self._gap(self._widths(t, self.delta), low) < self.epsilon:
                return self._high
            mu = self.means
            h = _argmax(np.where(low, -np.inf, w - mu), rng)  # argmin of L over High^t
            l_ = _argmax(np.where(low, mu + w, -np.inf), rng)  # argmax of U over Low^t
            if serial:
                # Pull([h, l]) at batch_size 1 is two one-pull batches in RoundRobin's
                # order: fewest pulls first, a tie broken by rng.integers(2) (the draw
                # round_robin makes). The same pulls, batches and generator use.
                ch, cl = counts.item(h), counts.item(l_)
                if ch < cl or (ch == cl and rng.integers(2) == 0):
                    order = (h, l_)
                else:
                    order = (l_, h)
                for i in order:
                    req = single[i]
                    if req is None:
                        req = single[i] = PullOne(i)
                    yield req
            else:
                yield Pull(np.array([h, l_], dtype=np.int64), _TWO)
            t += 1


_TWO = np.ones(2, dtype=np.int64)
_TWO.setflags(write=False)


def _argmax(values: np.ndarray, rng: np.random.Generator) -> int:
    """``top_k(values, 1, rng)`` (random ties), with a fast path for a unique maximum.

    Identical output and generator use: ``top_k`` draws only when there is a tie.
    """
    j = int(np.argmax(values))
    v = values[j]
    if np.count_nonzero(values == v) == 1:
        return j
    return int(top_k(values, 1, rng)[0])


def _real(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(float(v))
