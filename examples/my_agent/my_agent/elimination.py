"""Successive Elimination for the top k arms, written twice: in Python and compiled.

The algorithm. Successive Elimination (Even-Dar, Mannor & Mansour, "Action elimination
and stopping conditions for the multi-armed bandit and reinforcement learning problems",
JMLR 7, 2006, Sec. 3) pulls every surviving arm once per round and eliminates an arm as
soon as its confidence interval lies below the best arm's. For the top ``k`` arms it
also *accepts* arms, as racing algorithms do (Kaufmann & Kalyanakrishnan, "Information
complexity in bandit subset selection", COLT 2013, Sec. 2): with ``need`` arms still to
find among the survivors, after round ``t`` (every survivor pulled ``t`` times)

* accept a survivor whose empirical mean exceeds the ``(need + 1)``-th largest
  survivor mean by more than ``2 r_t``;
* eliminate a survivor whose empirical mean lies below the ``need``-th largest by more
  than ``2 r_t``;

and stop when ``k`` arms are accepted, or when the accepted and surviving arms number
``k`` (they are the answer). The radius is Hoeffding's for sub-Gaussian rewards of scale
``sigma`` (``problem.sigma``: 1/2 for rewards in [0, 1]) with a union bound over the
``n`` arms and the rounds::

    r_t = sigma * sqrt(2 log(4 n t^2 / delta) / t)

so that every interval holds at every round with probability at least
``1 - delta pi^2 / 12 > 1 - delta``; on that event every accepted arm is a top-k arm and
every eliminated arm is not (the racing argument), so the answer is correct with
probability at least ``1 - delta`` (fixed confidence, distinct means at the boundary;
with ``mu_k = mu_(k+1)`` it never stops and ``max_batches`` must truncate the episode).
In fixed budget it runs until the budget ends and answers with the empirical top k.

:class:`SuccessiveEliminationPy` is the algorithm as a Python generator (``_run``);
:class:`SuccessiveElimination` is the same algorithm as a numba generator ``run(ctx,
prm)``, which :func:`agents.run_episode` plays on the compiled fast path. Both make the
same requests on the same statistics, so they play the same episode for a seed.
"""

from __future__ import annotations

# --8<-- [start:imports]
import math

import numba
import numpy as np

from agents import Pull, ScriptedAgent, engine
from agents.base import check_probability

# --8<-- [end:imports]

__all__ = ["SuccessiveElimination", "SuccessiveEliminationPy", "run"]


# --8<-- [start:python]
class SuccessiveEliminationPy(ScriptedAgent):
    """Successive Elimination for the top k arms, in Python (see the module)."""

    name = "se_python"

    def __init__(self, delta: float = 0.1, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.delta = check_probability("delta", delta)

    def _run(self):
        n, k, sigma = self.problem.n_arms, self.problem.k, self.problem.sigma
        c = 4 * n / self.delta  # r_t = sigma sqrt(2 log(c t^2) / t)
        alive, accepted, t = np.arange(n), np.empty(0, dtype=np.int64), 0
        while accepted.size < k and accepted.size + alive.size > k:
            yield Pull.each(alive, 1)  # one more pull of each survivor
            t += 1
            radius = sigma * math.sqrt(2 * math.log(c * t * t) / t)
            need, means = k - accepted.size, self.means[alive]
            ranked = np.sort(means)[::-1]  # survivors' means, largest first
            accept = means - ranked[need] > 2 * radius
            reject = ranked[need - 1] - means > 2 * radius
            accepted = np.concatenate([accepted, alive[accept]])
            alive = alive[~(accept | reject)]
        return np.concatenate([accepted, alive])  # k arms
        # --8<-- [end:python]


# --8<-- [start:kernel]
@numba.njit
def run(ctx, prm):
    """Successive Elimination, compiled; ``prm = [delta]``."""
    delta = prm[0]
    n, k = ctx.iv[engine.N], ctx.iv[engine.K]
    sigma = ctx.fv[engine.SIGMA]
    c = 4.0 * n / delta
    alive = np.arange(n)  # the survivors are alive[:m]
    m = n
    accepted = np.empty(k, dtype=np.int64)  # accepted[:a]
    a = 0
    means = np.empty(n)
    t = 0
    while a < k and a + m > k:
        yield engine.request_each(ctx, alive[:m], 1)  # one more pull of each
        t += 1
        radius = sigma * math.sqrt(2 * math.log(c * t * t) / t)
        need = k - a
        for j in range(m):
            means[j] = ctx.means[alive[j]]
        ranked = np.sort(means[:m])  # smallest first
        # the need-th and the (need + 1)-th largest survivor means
        nth, after = ranked[m - need], ranked[m - 1 - need]
        kept = 0
        for j in range(m):
            if means[j] - after > 2 * radius:  # accept
                accepted[a] = alive[j]
                a += 1
            elif not nth - means[j] > 2 * radius:  # keep (else: eliminate)
                alive[kept] = alive[j]
                kept += 1
        m = kept
    for j in range(k - a):  # the survivors complete the answer
        accepted[a + j] = alive[j]
    engine.finish(ctx, accepted)


class SuccessiveElimination(ScriptedAgent):
    """Successive Elimination for the top k arms, compiled (see the module).

    Args:
        delta: the error probability of the confidence intervals, in (0, 1).
        seed: seed of the agent's generator (the scheduler's ties).
    """

    name = "successive_elimination"
    kernel = staticmethod(run)  # the fast-path loop is built from it

    def __init__(self, delta: float = 0.1, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.delta = check_probability("delta", delta)

    def params(self) -> np.ndarray:
        return np.array([self.delta])  # the kernel's prm
        # --8<-- [end:kernel]
