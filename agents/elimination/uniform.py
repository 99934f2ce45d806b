"""Uniform allocation: the baseline every paper compares against.

Spread the budget evenly over all arms (round robin), then recommend the ``k`` arms
with the highest empirical means (Zhou et al. 2014 Sec. 6; Shahrampour & Tarokh 2017
Sec. IV; Bubeck et al. 2013 call it "uniform sampling").

In fixed budget it uses the whole budget: ``floor(T / n)`` pulls of every arm, then the
``T mod n`` pulls left go one each to arms chosen at random. In fixed confidence it
pulls every arm once per round until ``max_batches`` truncates the episode (it has no
stopping rule of its own; ``rounds`` gives it one: stop after that many rounds).
"""

from __future__ import annotations

import numba
import numpy as np

from agents import engine
from agents.base import ScriptedAgent
from bandit_envs.problem import Problem

__all__ = ["Uniform"]


@numba.njit
def run(ctx, prm):
    """Uniform allocation (the compiled algorithm; ``prm = [rounds or -1]``)."""
    iv = ctx.iv
    n = iv[engine.N]
    arms = np.arange(n)
    if iv[engine.SETTING] == engine.FIXED_BUDGET:
        budget = iv[engine.BUDGET]
        reps = np.full(n, budget // n, dtype=np.int64)
        extra = budget % n
        pool = np.arange(n)
        engine.choose_distinct(pool, n, extra, ctx.rng)
        for j in range(extra):
            reps[pool[j]] += 1
        yield engine.request_pull(ctx, arms, reps)
    else:
        rounds = prm[0]
        done = 0
        while rounds < 0 or done < rounds:
            yield engine.request_each(ctx, arms, 1)
            done += 1
    engine.finish(ctx, engine.current_answer(ctx))


class Uniform(ScriptedAgent):
    """Uniform allocation over all arms.

    Args:
        rounds: in fixed confidence, stop after this many pulls of every arm
            (``None``: never stop; the env's ``max_batches`` must truncate the episode,
            and :meth:`reset` refuses a fixed-confidence problem without it).
        seed: seed of the tie-breaking generator.
    """

    name = "uniform"
    kernel = staticmethod(run)
    stopping_hint = "give it rounds=N (stop after N pulls of every arm)"

    def __init__(self, rounds: int | None = None, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        if rounds is not None and (
            isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1
        ):
            raise ValueError(f"rounds={rounds!r} must be an integer >= 1")
        self.rounds = rounds

    def stops_by_itself(self, problem: Problem) -> bool:
        """In fixed confidence only with ``rounds`` (else ``max_batches`` must truncate)."""
        return self.rounds is not None

    def params(self) -> np.ndarray:
        return np.array([-1.0 if self.rounds is None else float(self.rounds)])
