"""Exact reward draws for one episode's arms.

Pulling arm ``i`` ``a_i`` times draws ``a_i`` i.i.d. rewards; the environments only
need their sum, which they draw exactly in O(1) per arm:

* Bernoulli: ``Binomial(a_i, mu_i)``;
* Gaussian: ``Normal(a_i mu_i, a_i sigma^2)``;
* categorical on support ``s``: ``Multinomial(a_i, p_i) . s``.

:class:`IndependentRewards` draws from the episode's generator. :class:`PairedRewards`
implements common random numbers: the j-th reward of arm i is a fixed function of
(episode seed, i, j), the same whichever agent plays and in whatever batches it pulls,
so two agents run on the same seed can be compared pair by pair. It costs O(pulls).
"""

from __future__ import annotations

import numpy as np

from bandit_envs.instances import Arms

__all__ = ["IndependentRewards", "PairedRewards", "RewardSource"]


class RewardSource:
    """Draws reward sums for one episode."""

    def sums(self, arms: np.ndarray, reps: np.ndarray) -> np.ndarray:
        """Sum of ``reps[j]`` fresh rewards of arm ``arms[j]``, for each j (float64)."""
        raise NotImplementedError

    def one(self, arm: int) -> float:
        """One fresh reward of ``arm``."""
        raise NotImplementedError


class IndependentRewards(RewardSource):
    """Rewards drawn from the episode's generator (the default)."""

    def __init__(self, arms: Arms, rng: np.random.Generator) -> None:
        self._means = arms.means
        self._dist = arms.distribution
        self._rng = rng
        self._sigma = arms.sigma
        self._support = arms.support
        self._probs = arms.probs
        self._means_list = self._means.tolist()
        self._buf: list[float] = []
        self._pos = 0
        if self._dist == "categorical":
            self._cdf = np.cumsum(arms.probs, axis=1)
            self._cdf[:, -1] = 1.0

    _UNIFORM_PULLS_PER_ARM = 6
    _BUFFER = 1024

    def sums(self, arms: np.ndarray, reps: np.ndarray) -> np.ndarray:
        """Exact sums: binomial, normal or multinomial draws (see module docstring).

        Bernoulli batches with few pulls per arm (at most 6 on average) compare one
        uniform per pull with the mean instead: the same law, about 3x faster than a
        binomial call per arm at that size.
        """
        rng = self._rng
        if self._dist == "bernoulli":
            total = int(reps.sum())
            if total <= self._UNIFORM_PULLS_PER_ARM * arms.shape[0]:
                if total == arms.shape[0]:  # one pull per arm
                    return (rng.random(total) < self._means[arms]).astype(np.float64)
                hits = rng.random(total) < np.repeat(self._means[arms], reps)
                running = np.cumsum(hits, dtype=np.int64)
                out = running[np.cumsum(reps) - 1].astype(np.float64)
                out[1:] -= out[:-1].copy()
                return out
            return rng.binomial(reps, self._means[arms]).astype(np.float64)
        if self._dist == "gaussian":
            noise = rng.standard_normal(arms.shape[0])
            return reps * self._means[arms] + self._sigma * np.sqrt(reps) * noise
        counts = rng.multinomial(reps, self._probs[arms])
        return counts @ self._support

    def _uniform(self) -> float:
        """Next uniform from a buffer refilled from the generator in blocks."""
        pos = self._pos
        if pos == len(self._buf):
            self._buf = self._rng.random(self._BUFFER).tolist()
            pos = 0
        self._pos = pos + 1
        return self._buf[pos]

    def one(self, arm: int) -> float:
        """A single reward: one uniform (Bernoulli, categorical) or one normal draw."""
        if self._dist == "bernoulli":
            return 1.0 if self._uniform() < self._means_list[arm] else 0.0
        if self._dist == "gaussian":
            return float(self._means[arm] + self._sigma * self._rng.standard_normal())
        u = self._uniform()
        return float(self._support[np.searchsorted(self._cdf[arm], u, side="right")])


class PairedRewards(RewardSource):
    """Common random numbers indexed by (arm, pull number).

    Arm ``i`` owns a generator seeded from ``(seed, i)``; its j-th uniform (or normal)
    decides its j-th reward, whatever the batch in which that pull happens. Streams are
    extended lazily, so the cost is O(pulls).
    """

    _BLOCK = 64

    def __init__(self, arms: Arms, seed: int) -> None:
        self._means = arms.means
        self._dist = arms.distribution
        self._sigma = arms.sigma
        self._support = arms.support
        if self._dist == "categorical":
            self._cdf = np.cumsum(arms.probs, axis=1)
            self._cdf[:, -1] = 1.0
        n = self._means.shape[0]
        self._seeds = np.random.SeedSequence(seed).generate_state(n, dtype=np.uint64)
        self._gens: list[np.random.Generator | None] = [None] * n
        self._streams: list[np.ndarray] = [np.empty(0)] * n
        self._used = np.zeros(n, dtype=np.int64)

    def _take(self, arm: int, count: int) -> np.ndarray:
        start = int(self._used[arm])
        stop = start + count
        stream = self._streams[arm]
        if stop > stream.shape[0]:
            gen = self._gens[arm]
            if gen is None:
                gen = np.random.Generator(np.random.PCG64(int(self._seeds[arm])))
                self._gens[arm] = gen
            size = max(stop - stream.shape[0], stream.shape[0], self._BLOCK)
            fresh = gen.standard_normal(size) if self._dist == "gaussian" else gen.random(size)
            stream = np.concatenate((stream, fresh))
            self._streams[arm] = stream
        self._used[arm] = stop
        return stream[start:stop]

    def _rewards(self, arm: int, draws: np.ndarray) -> np.ndarray:
        if self._dist == "bernoulli":
            return (draws < self._means[arm]).astype(np.float64)
        if self._dist == "gaussian":
            return self._means[arm] + self._sigma * draws
        return self._support[np.searchsorted(self._cdf[arm], draws, side="right")]

    def sums(self, arms: np.ndarray, reps: np.ndarray) -> np.ndarray:
        """Sums of each arm's next ``reps`` rewards in its stream."""
        out = np.empty(arms.shape[0], dtype=np.float64)
        for j, (arm, rep) in enumerate(zip(arms.tolist(), reps.tolist())):
            out[j] = self._rewards(arm, self._take(arm, rep)).sum()
        return out

    def one(self, arm: int) -> float:
        """The arm's next reward in its stream."""
        return float(self._rewards(arm, self._take(arm, 1))[0])
