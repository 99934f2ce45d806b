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

from collections.abc import Generator

import numpy as np

from agents.base import Pull, Request, ScriptedAgent

__all__ = ["Uniform"]


class Uniform(ScriptedAgent):
    """Uniform allocation over all arms.

    Args:
        rounds: in fixed confidence, stop after this many pulls of every arm
            (``None``: never stop; the env's ``max_batches`` truncates).
        seed: seed of the tie-breaking generator.
    """

    name = "uniform"

    def __init__(self, rounds: int | None = None, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        if rounds is not None and rounds < 1:
            raise ValueError(f"rounds={rounds} must be >= 1")
        self.rounds = rounds

    def _run(self) -> Generator[Request, None, np.ndarray]:
        n = self.problem.n_arms
        arms = np.arange(n)
        if self.problem.fixed_budget:
            per_arm, extra = divmod(self.problem.budget, n)
            reps = np.full(n, per_arm, dtype=np.int64)
            reps[self.rng.choice(n, size=extra, replace=False)] += 1
            yield Pull(arms, reps)
        else:
            done = 0
            while self.rounds is None or done < self.rounds:
                yield Pull.each(arms, 1)
                done += 1
        return self.current_answer()
