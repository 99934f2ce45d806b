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

Both keep their state in arrays (:meth:`RewardSource.kernel_state`) so that the
compiled fast episode path (:mod:`bandit_envs.kernels`) continues the same streams:
independent Bernoulli and Gaussian draws are made here with NumPy and there with
numba's NumPy-compatible ``Generator`` (the same numbers); categorical and paired draws
are made by the kernels in both paths.
"""

from __future__ import annotations

import numpy as np

from bandit_envs import kernels
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

    state: kernels.RewardState

    def kernel_state(self) -> kernels.RewardState:
        """The source's arrays, for :func:`bandit_envs.kernels.draw_sums` and friends.

        The arrays are the source's own: draws made through them advance this source.
        """
        return self.state

    def _kernel_sums(self, arms: np.ndarray, reps: np.ndarray) -> np.ndarray:
        out = np.empty(arms.shape[0], dtype=np.float64)
        kernels.draw_sums(*self.state, arms, reps, out)
        return out

    def _kernel_one(self, arm: int) -> float:
        return kernels.draw_one(*self.state, arm)


_NO_RNG = np.random.default_rng(0)  # paired sources never draw from it
_DUMMY_2D = np.zeros((1, 1))
_DUMMY_1D = np.zeros(1)


def _state(
    kind: int, arms: Arms, rng: np.random.Generator, buffer: int, key: int
) -> kernels.RewardState:
    n = arms.means.shape[0]
    if arms.distribution == "categorical":
        # writeable copies of the instance's read-only arrays: the arrays of every state
        # then have one numba type, and the compiled code that takes a state one overload
        probs = np.array(arms.probs, dtype=np.float64, order="C")
        cdf = np.cumsum(probs, axis=1)
        cdf[:, -1] = 1.0
        support = np.array(arms.support, dtype=np.float64, order="C")
    else:
        probs = cdf = _DUMMY_2D
        support = _DUMMY_1D
    return kernels.RewardState(
        kind=kind,
        dist=kernels.DISTRIBUTION_CODES[arms.distribution],
        rng=rng,
        buf=np.zeros(buffer),
        pos=np.full(1, buffer, dtype=np.int64),
        key=np.array([key], dtype=np.uint64),
        used=np.zeros(n, dtype=np.int64),
        means=np.array(arms.means, dtype=np.float64),
        sigma=float(arms.sigma) if arms.sigma is not None else 0.0,
        cdf=cdf,
        probs=probs,
        support=support,
    )


class IndependentRewards(RewardSource):
    """Rewards drawn from the episode's generator (the default)."""

    _UNIFORM_PULLS_PER_ARM = kernels.UNIFORM_PULLS_PER_ARM
    _BUFFER = 1024

    def __init__(self, arms: Arms, rng: np.random.Generator) -> None:
        self.state = _state(kernels.INDEPENDENT, arms, rng, self._BUFFER, 0)
        self._means = self.state.means
        self._dist = arms.distribution
        self._rng = rng
        self._sigma = self.state.sigma
        self._means_list = self._means.tolist()
        # The one-pull buffer lives in Python objects while Python draws (fast), in the
        # state arrays while compiled code draws; kernel_state() hands it over.
        self._buf: list[float] = []
        self._pos = 0
        self._in_arrays = False

    def kernel_state(self) -> kernels.RewardState:
        """The source's arrays, with the one-pull buffer handed over to them."""
        if not self._in_arrays:
            st = self.state
            if self._buf:
                st.buf[:] = self._buf
            st.pos[0] = self._pos if self._buf else self._BUFFER
            self._in_arrays = True
        return self.state

    def _from_arrays(self) -> None:
        st = self.state
        pos = int(st.pos[0])
        self._buf = st.buf.tolist() if pos < self._BUFFER else []
        self._pos = pos if pos < self._BUFFER else 0
        self._in_arrays = False

    def sums(self, arms: np.ndarray, reps: np.ndarray) -> np.ndarray:
        """Exact sums: binomial, normal or multinomial draws (see module docstring).

        Bernoulli batches with few pulls per arm (at most 6 on average) compare one
        uniform per pull with the mean instead: the same law, about 3x faster than a
        binomial call per arm at that size.
        """
        rng = self._rng
        if self._in_arrays:
            self._from_arrays()
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
        return self._kernel_sums(arms, reps)

    def _uniform(self) -> float:
        """Next uniform from a buffer refilled from the generator in blocks."""
        if self._in_arrays:
            self._from_arrays()
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
        return self._kernel_one(arm)

    def _kernel_sums(self, arms: np.ndarray, reps: np.ndarray) -> np.ndarray:
        self.kernel_state()
        return super()._kernel_sums(arms, reps)

    def _kernel_one(self, arm: int) -> float:
        self.kernel_state()
        return super()._kernel_one(arm)


class PairedRewards(RewardSource):
    """Common random numbers indexed by (arm, pull number).

    The j-th reward of arm ``i`` is decided by a uniform that is a fixed function of
    ``(seed, i, j)`` (a counter-based SplitMix64 hash, :mod:`bandit_envs.kernels`),
    whatever the batch in which that pull happens. The cost is O(pulls).
    """

    def __init__(self, arms: Arms, seed: int) -> None:
        self.state = _state(kernels.PAIRED, arms, _NO_RNG, 1, seed)

    def sums(self, arms: np.ndarray, reps: np.ndarray) -> np.ndarray:
        """Sums of each arm's next ``reps`` rewards in its stream."""
        return self._kernel_sums(arms, reps)

    def one(self, arm: int) -> float:
        """The arm's next reward in its stream."""
        return self._kernel_one(arm)
