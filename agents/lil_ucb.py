"""lil'UCB (Jamieson, Malloy, Nowak, Bubeck 2014): best-arm identification, k = 1 only."""

from __future__ import annotations

import heapq
from collections.abc import Generator

import numpy as np

from agents import confidence
from agents.base import (
    FIXED_BUDGET,
    FIXED_CONFIDENCE,
    PullOne,
    Request,
    ScriptedAgent,
    check_probability,
)
from agents.lucb_common import VARIANTS, CountTable
from bandit_envs.problem import Problem
from bandit_envs.scoring import top_k

__all__ = ["LilUCB"]


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
        eps, beta, lam: override the variant's ``eps`` (``[0, 1)``; ``(0, 1)`` when
            faithful), ``beta > 0`` and ``lambda > 0``; ``None``: the variant's value.
        seed: seed of the tie-breaking generator.

    Settings: k = 1 only (``reset`` raises ``ValueError`` for k > 1); fixed confidence,
    and fixed budget as an anytime algorithm (answer: the most pulled arm, ties at
    random). Any ``batch_size``/``repeat_limit`` (one pull per request: a
    :class:`~agents.base.PullOne`).

    Departures from the paper, and why:

    * ``U`` has ``log((1 + eps) t + 2)`` inside the outer log (jiang2017 Sec. 5's
      modification, "to avoid negative numbers inside the log"; JMNB14 use
      ``log((1 + eps) t)``). The bound is wider, so the guarantee stands.
    * Ties (equal upper bounds, equal counts) are broken uniformly at random
      (paper-notes) by a random key per arm, redrawn whenever the arm is pulled.
    """

    name = "lil_ucb"
    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    k_values = frozenset({1})

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

    def params(self, n_arms: int) -> dict[str, float]:
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

    def _run(self) -> Generator[Request, None, np.ndarray]:
        n = self.problem.n_arms
        par = self.params(n)
        eps, lam, lil_delta = par["eps"], par["lam"], par["lil_delta"]
        mult = 1.0 + par["beta"]
        sigma = self.problem.sigma
        radius = CountTable(lambda t: mult * confidence.lil_bound(t, lil_delta, eps, sigma))
        yield from self._each_once(np.arange(n))
        counts, means = self.counts, self.means
        t = counts.tolist()
        m = means.tolist()
        buf: list[float] = []
        tb = self.rng.random(n).tolist()
        ver = [0] * n
        heap = [(-(m[i] + radius(t[i])), tb[i], i, 0) for i in range(n)]
        heapq.heapify(heap)
        total = sum(t)
        tmax = max(t)
        single: list[PullOne | None] = [None] * n  # one cached request per arm
        while True:
            if (1.0 + lam) * tmax >= 1.0 + lam * total:
                return self.current_answer()  # argmax_i T_i (unique unless lam < 1)
            while True:
                e = heap[0]
                if e[3] == ver[e[2]]:
                    break
                heapq.heappop(heap)
            i = e[2]
            req = single[i]
            if req is None:
                req = single[i] = PullOne(i)
            yield req
            c = counts.item(i)
            total += c - t[i]
            t[i] = c
            if c > tmax:
                tmax = c
            m[i] = mu = means.item(i)
            if not buf:
                buf.extend(self.rng.random(1024).tolist())
            ver[i] += 1
            tb[i] = key = buf.pop()
            heapq.heappush(heap, (-(mu + radius(c)), key, i, ver[i]))
            if len(heap) > 4 * n + 256:
                heap = [(-(m[j] + radius(t[j])), tb[j], j, ver[j]) for j in range(n)]
                heapq.heapify(heap)

    def current_answer(self) -> np.ndarray:
        """The most pulled arm (ties at random): lil'UCB's answer at any time."""
        return top_k(self.counts.astype(np.float64), 1, self.rng)
