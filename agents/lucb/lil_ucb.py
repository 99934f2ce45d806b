"""lil'UCB (Jamieson, Malloy, Nowak, Bubeck 2014): best-arm identification, k = 1 only."""

from __future__ import annotations

import numba
import numpy as np

from agents import engine
from agents.base import (
    FIXED_BUDGET,
    FIXED_CONFIDENCE,
    ScriptedAgent,
    check_probability,
)
from agents.engine import confidence
from agents.lucb.family import VARIANTS
from bandit_envs.problem import Problem

__all__ = ["LilUCB"]

#: ``prm`` layout: the lil' parameters of the episode (see :meth:`LilUCB.params`).
P_EPS, P_MULT, P_LAM, P_LIL_DELTA = 0, 1, 2, 3


@numba.njit(cache=True)
def _before(key, tb, a, b):
    """Whether arm ``a`` ranks above arm ``b``: larger bound, then smaller random key."""
    return key[a] > key[b] or (key[a] == key[b] and tb[a] < tb[b])


@numba.njit(cache=True)
def _sift(heap, pos, key, tb, j, m):
    """Restore the max-heap ``heap[:m]`` (ordered by :func:`_before`) around position ``j``."""
    a = heap[j]
    while j > 0:  # up
        p = (j - 1) >> 1
        if not _before(key, tb, a, heap[p]):
            break
        heap[j] = heap[p]
        pos[heap[j]] = j
        j = p
    while True:  # down
        c = 2 * j + 1
        if c >= m:
            break
        if c + 1 < m and _before(key, tb, heap[c + 1], heap[c]):
            c += 1
        if not _before(key, tb, heap[c], a):
            break
        heap[j] = heap[c]
        pos[heap[j]] = j
        j = c
    heap[j] = a
    pos[a] = j


@numba.njit
def run(ctx, prm):
    """lil'UCB (the compiled algorithm; ``prm`` as :meth:`LilUCB.params`).

    The arms sit in an indexed max-heap by ``mean + (1 + beta) U(T_i)`` (ties: a random
    key per arm, redrawn whenever the arm is pulled); a pull changes one arm's bound,
    so a step costs O(log n).
    """
    iv = ctx.iv
    n = iv[engine.N]
    eps, mult, lam, lil_delta = prm[P_EPS], prm[P_MULT], prm[P_LAM], prm[P_LIL_DELTA]
    sigma = ctx.fv[engine.SIGMA]
    counts, means, rng = ctx.counts, ctx.means, ctx.rng
    yield engine.request_each(ctx, np.arange(n), 1)
    key = np.empty(n)
    tb = np.empty(n)
    heap = np.arange(n)
    pos = np.arange(n)
    total = 0
    tmax = 0
    for i in range(n):
        c = counts[i]
        key[i] = means[i] + mult * confidence.lil_width(float(c), lil_delta, eps, sigma)
        tb[i] = rng.random()
        total += c
        if c > tmax:
            tmax = c
    for j in range(n // 2 - 1, -1, -1):
        _sift(heap, pos, key, tb, j, n)
    while True:
        if (1.0 + lam) * tmax >= 1.0 + lam * total:
            break  # one arm dominates the pulls
        i = heap[0]
        yield i
        c = counts[i]
        total += 1
        if c > tmax:
            tmax = c
        key[i] = means[i] + mult * confidence.lil_width(float(c), lil_delta, eps, sigma)
        tb[i] = rng.random()
        _sift(heap, pos, key, tb, pos[i], n)
    engine.finish(ctx, engine.current_answer(ctx))  # argmax_i T_i, ties at random


class LilUCB(ScriptedAgent):
    """lil'UCB: pull the arm of largest lil' upper bound; stop when one arm dominates the pulls.

    Paper:
        Kevin Jamieson, Matthew Malloy, Robert Nowak, Sebastien Bubeck. "lil' UCB: an
        optimal exploration algorithm for multi-armed bandits". COLT 2014 (PMLR 35:
        423-439), Algorithm 1 (lil'UCB) and Sec. 5 (parameters of the simulations).
        Baseline of Jiang, Li, Qiao (2017) Sec. 5.2 (best-1-arm).

    Formula used: pull every arm once; then pull
    ``I_t = argmax_i mean_i + (1 + beta) U(T_i, delta)`` with
    ``U(t, w) = (1 + sqrt(eps)) sqrt(2 sigma^2 (1 + eps) / t log(log((1 + eps) t + 2) / w))``;
    stop as soon as some arm has ``T_i >= 1 + lambda sum_{j != i} T_j`` and answer
    ``argmax_i T_i``.

    Parameters (JMNB14 Sec. 5):

    * ``variant="faithful"`` (lil'UCB): ``eps = 0.01``, ``beta = 1``,
      ``lambda = ((2 + beta)/beta)^2 = 9`` and ``delta`` solving
      ``4 sqrt(c_eps delta) + 4 c_eps delta = nu``, i.e.
      ``delta = (sqrt(1 + nu) - 1)^2 / (4 c_eps)`` (the guarantee of their Theorem).
    * ``variant="heuristic"`` (lil'UCB Heuristic): ``eps = 0``, ``beta = 1/2``,
      ``lambda = 1 + 10/n``, ``delta = nu / 5``.

    Args:
        delta: target error probability ``nu``, in (0, 1). Default 0.01 (jiang2017 Sec. 5).
        variant: ``"faithful"`` (default) or ``"heuristic"``, see above.
        eps: overrides the variant's ``eps`` (``[0, 1)``; ``(0, 1)`` when faithful);
            ``None``: the variant's value.
        beta: overrides the variant's ``beta > 0``; ``None``: the variant's value.
        lam: overrides the variant's ``lambda > 0``; ``None``: the variant's value.
        seed: seed of the tie-breaking generator.

    Settings: k = 1 only (``reset`` raises ``ValueError`` for k > 1); fixed confidence,
    and fixed budget as an anytime algorithm (answer: the most pulled arm, ties at
    random). Any ``batch_size``/``repeat_limit`` (one pull per request, ``yield arm``;
    the first round is one request for every arm once).

    Departures from the paper, and why:

    * ``U`` has ``log((1 + eps) t + 2)`` inside the outer log (jiang2017 Sec. 5's
      modification, "to avoid negative numbers inside the log"; JMNB14 use
      ``log((1 + eps) t)``). The bound is wider, so the guarantee stands.
    * Ties (equal upper bounds, equal counts) are broken uniformly at random
      (the paper does not say) by a random key per arm, redrawn whenever the arm is pulled.
    """

    name = "lil_ucb"
    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    k_values = frozenset({1})
    kernel = staticmethod(run)
    answer_rule = engine.RULE_MOST_PULLED

    def __init__(
        self,
        delta: float = 0.01,
        variant: str = "faithful",
        eps: float | None = None,
        beta: float | None = None,
        lam: float | None = None,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        check_probability("delta", delta)  # the target error probability nu
        if variant not in VARIANTS:
            raise ValueError(f"variant={variant!r} must be one of {list(VARIANTS)}")
        if eps is not None:
            low_ok = eps > 0.0 if variant == "faithful" else eps >= 0.0
            if not (isinstance(eps, (int, float)) and low_ok and eps < 1.0):
                rule = "(0, 1)" if variant == "faithful" else "[0, 1)"
                raise ValueError(f"eps={eps!r} must lie in {rule} for variant={variant!r}")
        for pname, value in (("beta", beta), ("lam", lam)):
            if value is not None and not (isinstance(value, (int, float)) and value > 0.0):
                raise ValueError(f"{pname}={value!r} must be > 0")
        self.delta = float(delta)
        self.variant = variant
        self.eps = eps
        self.beta = beta
        self.lam = lam

    def variant_params(self, n_arms: int) -> dict[str, float]:
        """The ``eps``, ``beta``, ``lam`` and lil' ``delta`` used on ``n_arms`` arms."""
        if self.variant == "faithful":
            eps = 0.01 if self.eps is None else float(self.eps)
            beta = 1.0 if self.beta is None else float(self.beta)
            lam = ((2.0 + beta) / beta) ** 2 if self.lam is None else float(self.lam)
            lil_delta = confidence.lil_faithful_delta(self.delta, eps, "lil_ucb")
        else:
            eps = 0.0 if self.eps is None else float(self.eps)
            beta = 0.5 if self.beta is None else float(self.beta)
            lam = 1.0 + 10.0 / n_arms if self.lam is None else float(self.lam)
            lil_delta = self.delta / 5.0
        return {"eps": eps, "beta": beta, "lam": lam, "lil_delta": lil_delta}

    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode; lil'UCB identifies the best arm only (k = 1)."""
        if problem.k != 1:
            raise ValueError(
                f"lil_ucb identifies the single best arm: it needs k=1, got k={problem.k} "
                f"(use lil_rand_lucb, lucb_pp or lil_lucb for top-k)"
            )
        super().reset(problem, seed=seed)

    def params(self) -> np.ndarray:
        """``prm = [eps, 1 + beta, lambda, lil' delta]`` on this episode's arms."""
        par = self.variant_params(self.problem.n_arms)
        return np.array([par["eps"], 1.0 + par["beta"], par["lam"], par["lil_delta"]])
