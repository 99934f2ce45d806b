"""The vector environments PPO, A2C and DQN train on (SB3 ``VecEnv``, flat observations).

:func:`make_training_env` builds ``num_envs`` copies of a training family: the native
vector env through ``bandit_envs.sb3`` when present, else SB3's ``DummyVecEnv`` (or
Gymnasium's sync vector env), with the observation flattened by
:class:`~bandit_envs.wrappers.FlatObservation` and the rewards scaled for the critic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numba
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

import bandit_envs  # noqa: F401  (registers the ids; numba cache locators first)
from agents.learned.families import PULL_BY_PULL_ID, training_kwargs
from bandit_envs.wrappers import FlatObservation

__all__ = [
    "VecFlatObservation",
    "VecPosteriorReward",
    "VecScaleReward",
    "expected_value_gain",
    "make_training_env",
    "top_k_posterior_value",
]


class VecFlatObservation(VecEnvWrapper):
    """SB3 ``VecEnv`` wrapper applying a :class:`~bandit_envs.wrappers.FlatObservation`.

    The SB3-side twin of :class:`bandit_envs.wrappers.FlattenTopKVectorObservation`:
    it transforms the batched ``Dict`` observation and each
    ``info["terminal_observation"]``, whichever ``VecEnv`` sits below (the native vector
    env adapter or ``DummyVecEnv``).
    """

    def __init__(self, venv: VecEnv, transform: FlatObservation) -> None:
        super().__init__(venv, observation_space=transform.observation_space)
        self.transform = transform

    def reset(self) -> np.ndarray:
        """Reset all envs; flat observations."""
        return self.transform(self.venv.reset())

    def step_wait(self) -> VecEnvStepReturn:
        """Step; flat observations, terminal observations included."""
        obs, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            final = info.get("terminal_observation")
            if final is not None and isinstance(final, Mapping):
                info["terminal_observation"] = self.transform(final)
        return self.transform(obs), rewards, dones, infos


class VecScaleReward(VecEnvWrapper):
    """Multiply rewards by a constant (the terminal regret is small; the critic likes O(1))."""

    def __init__(self, venv: VecEnv, scale: float) -> None:
        super().__init__(venv)
        self.scale = float(scale)

    def reset(self) -> Any:
        """Reset all envs."""
        return self.venv.reset()

    def step_wait(self) -> VecEnvStepReturn:
        """Step; scaled rewards."""
        obs, rewards, dones, infos = self.venv.step_wait()
        return obs, rewards * self.scale, dones, infos


def top_k_posterior_value(
    counts: np.ndarray, means: np.ndarray, prior: tuple[float, float], k: int
) -> np.ndarray:
    """``Phi(s)``: the mean of the ``k`` largest posterior means (last axis = arms).

    Under a Beta(a, b) prior on Bernoulli means, the expected mean of the true means of
    the Bayes answer (the posterior top k) given the observations: the aggregate regret
    of that answer is ``(1/k) sum of the k largest true means - Phi``.
    """
    a, b = prior
    counts = np.asarray(counts, dtype=np.float64)
    post = (a + np.rint(np.asarray(means, dtype=np.float64) * counts)) / (a + b + counts)
    return np.sort(post, axis=-1)[..., -k:].mean(axis=-1)


#: :class:`VecPosteriorReward` enumerates a batch's outcomes up to this many.
MAX_OUTCOMES = 4096


def expected_value_gain(
    counts: np.ndarray,
    means: np.ndarray,
    pulls: np.ndarray,
    prior: tuple[float, float],
    k: int,
) -> np.ndarray | float:
    """``E[Phi(s') - Phi(s)]`` when the pulls ``pulls`` are made from state ``s``.

    ``s`` is ``(counts, means)`` (one env, or one row per env); each pulled arm's
    successes follow its posterior predictive (beta-binomial), independently across
    arms, and every joint outcome is enumerated (at most :data:`MAX_OUTCOMES` per row).
    For one pull this is the knowledge-gradient value of the pulled arm (Frazier,
    Powell, Dayanik 2008). Returns a float for one env, an array for rows.
    """
    a, b = prior
    counts = np.asarray(counts, dtype=np.float64)
    pulls = np.asarray(pulls, dtype=np.int64)
    single = counts.ndim == 1
    counts, pulls = np.atleast_2d(counts), np.atleast_2d(pulls)
    wins = np.rint(np.atleast_2d(np.asarray(means, dtype=np.float64)) * counts)
    sizes = np.prod(pulls.astype(np.float64) + 1.0, axis=1)
    if np.any(sizes > MAX_OUTCOMES):
        row = int(np.argmax(sizes))
        raise ValueError(
            f"a batch with {sizes[row]:.0f} joint outcomes (pulls {pulls[row].tolist()}) is "
            f"over MAX_OUTCOMES={MAX_OUTCOMES}: reward='posterior' enumerates them; use "
            f"smaller batches or reward='env'"
        )
    gains = _expected_gains(a + wins, b + counts - wins, pulls, int(k))
    return float(gains[0]) if single else gains


@numba.njit(cache=True)
def _top_k_mean(values: np.ndarray, k: int) -> float:
    """Mean of the ``k`` largest entries (ties counted), in ``k`` passes, no allocation."""
    total, taken, below = 0.0, 0, np.inf
    while taken < k:
        best, count = -np.inf, 0
        for v in values:
            if v < below:
                if v > best:
                    best, count = v, 1
                elif v == best:
                    count += 1
        take = min(count, k - taken)
        total += best * take
        taken += take
        below = best
    return total / k


@numba.njit(cache=True)
def _expected_gains(alpha: np.ndarray, beta: np.ndarray, pulls: np.ndarray, k: int) -> np.ndarray:
    """Rows of :func:`expected_value_gain`: enumerate each row's joint outcomes."""
    rows, n = alpha.shape
    out = np.zeros(rows)
    values = np.empty(n)
    arms = np.empty(n, dtype=np.int64)
    digit = np.zeros(n, dtype=np.int64)
    for e in range(rows):
        m, top = 0, 0
        for i in range(n):
            values[i] = alpha[e, i] / (alpha[e, i] + beta[e, i])
            if pulls[e, i] > 0:
                arms[m] = i
                m += 1
                top = max(top, pulls[e, i])
        if m == 0:
            continue
        before = _top_k_mean(values, k)
        pmf = np.zeros((m, top + 1))
        post = np.zeros((m, top + 1))
        for t in range(m):
            i, c = arms[t], pulls[e, arms[t]]
            al, be = alpha[e, i], beta[e, i]
            pmf[t, 0] = 1.0
            for j in range(c):  # beta-binomial, by the ratio of consecutive terms
                pmf[t, j + 1] = pmf[t, j] * (c - j) / (j + 1) * (al + j) / (be + c - j - 1)
            pmf[t, : c + 1] /= pmf[t, : c + 1].sum()
            for j in range(c + 1):
                post[t, j] = (al + j) / (al + be + c)
            digit[t] = 0
        total = 0.0
        while True:  # mixed-radix count over the joint outcomes
            w = 1.0
            for t in range(m):
                w *= pmf[t, digit[t]]
                values[arms[t]] = post[t, digit[t]]
            total += w * _top_k_mean(values, k)
            t = 0
            while t < m:
                digit[t] += 1
                if digit[t] <= pulls[e, arms[t]]:
                    break
                digit[t] = 0
                t += 1
            if t == m:
                break
        out[e] = total - before
    return out


class VecPosteriorReward(VecEnvWrapper):
    """Training reward for a family whose means are drawn from a known Beta prior.

    Replaces the environment's reward (minus the aggregate regret of the answer, at
    the end only) by ``r_t = E[Phi(s_{t+1}) - Phi(s_t) | s_t, a_t]`` at every step, where
    ``Phi`` is :func:`top_k_posterior_value` and the expectation is over the pulls'
    outcomes under the posterior predictive (:func:`expected_value_gain`; ``a_t`` is the
    pulls the env made). For every policy the expected return is then the same as
    that of the environment's reward, up to a constant no policy changes:

    * ``-E[regret of the posterior top-k answer] = E[Phi(s_T)] - E[mean of the k
      largest true means]`` (the second term does not depend on the policy), and
      ``Phi(s_0) = a / (a + b)`` for every episode;
    * ``E[Phi(s_T) - Phi(s_0)] = E[sum_t r_t]`` by the tower property, because the
      family draws its means from the prior, so the posterior predictive is the law of
      the next rewards.

    So the optimal policy is the same (the Bayes-optimal one), but the return has far
    less variance: the instance's luck (the top-k means) and each pull's outcome noise
    are replaced by their expectations. Each term is a potential-based shaping term
    (Ng, Harada, Russell, ICML 1999) in expectation, crediting a pull with the change
    of the Bayes value it causes; a one-step greedy policy on it is the knowledge
    gradient (Frazier, Powell, Dayanik 2008).

    Works on the ``Dict`` observations (below :class:`VecFlatObservation`) of a fixed
    budget family; the policy should answer with the posterior top k
    (``PolicyAgent(answer="posterior", prior=...)``).
    """

    def __init__(self, venv: VecEnv, prior: tuple[float, float], k: int) -> None:
        super().__init__(venv)
        self.prior, self.k = prior, int(k)
        self._counts: np.ndarray | None = None
        self._means: np.ndarray | None = None

    def _remember(self, obs: Mapping[str, Any]) -> None:
        self._counts = np.array(obs["counts"], dtype=np.int64)
        self._means = np.array(obs["means"], dtype=np.float64)

    def reset(self) -> Any:
        """Reset all envs; remember their observations."""
        obs = self.venv.reset()
        self._remember(obs)
        return obs

    def step_wait(self) -> VecEnvStepReturn:
        """Step; rewards ``E[Phi(s_{t+1}) - Phi(s_t) | s_t, a_t]``."""
        obs, _, dones, infos = self.venv.step_wait()
        assert self._counts is not None and self._means is not None
        after = np.array(obs["counts"], dtype=np.int64)
        for i in np.flatnonzero(dones):
            after[i] = infos[i]["terminal_observation"]["counts"]
        gains = expected_value_gain(
            self._counts, self._means, after - self._counts, self.prior, self.k
        )
        self._remember(obs)  # a finished env's next episode starts from its reset observation
        return obs, gains.astype(np.float32), dones, infos


def _native_factory() -> Callable[..., VecEnv] | None:
    try:
        from bandit_envs.sb3 import make_sb3_vec_env  # type: ignore[import-not-found]
    except ImportError:
        return None
    return make_sb3_vec_env


def make_training_env(
    env_id: str,
    num_envs: int,
    *,
    seed: int | None = 0,
    env_kwargs: Mapping[str, Any] | None = None,
    transform: FlatObservation | None = None,
    backend: str = "auto",
    reward_scale: float = 1.0,
    reward: str = "env",
) -> tuple[VecEnv, FlatObservation, str]:
    """An SB3 ``VecEnv`` of ``num_envs`` copies of ``env_id`` with flat observations.

    Args:
        env_id: ``"TopK-v0"``, ``"TopK-Batch-v0"`` or ``"TopK-PullByPull-v0"`` (no
            native vector env: ``"auto"`` is ``"dummy"``).
        num_envs: parallel environments.
        seed: env ``i`` is reset with ``seed + i`` first, then continues its stream.
        env_kwargs: ``gym.make`` kwargs (``invalid_action="project"`` is set for the
            batch id).
        transform: the observation transform; by default
            :meth:`FlatObservation.from_env` of the environment.
        backend: ``"native"`` (``bandit_envs.sb3.make_sb3_vec_env``), ``"dummy"``
            (SB3's ``DummyVecEnv`` of ``gym.make`` envs), ``"sync"``
            (``gym.make_vec(..., "sync")`` through ``bandit_envs.sb3.SB3VecEnv``) or
            ``"auto"`` (native when available).
        reward_scale: multiply rewards (training signal only; ``info`` is unchanged).
        reward: ``"env"`` (the environment's reward) or ``"posterior"``
            (:class:`VecPosteriorReward` with the transform's prior and ``k``: the
            expected change of the posterior top-k value at each step; fixed budget
            families only).

    Returns:
        ``(vec_env, transform, backend_used)``.
    """
    kwargs = training_kwargs(env_id, env_kwargs)
    if num_envs < 1:
        raise ValueError(f"num_envs={num_envs} must be >= 1")
    native = _native_factory()
    if env_id.endswith(PULL_BY_PULL_ID):  # no native vector env: one env object per copy
        native = None
    if backend == "auto":
        backend = "native" if native is not None else "dummy"
    if backend == "native":
        if native is None:
            raise ImportError(
                f"backend='native' needs a native vector env of {env_id!r} and "
                "bandit_envs.sb3 (the adapter); use backend='dummy'"
            )
        venv = native(env_id, num_envs, seed=seed, **kwargs)
    elif backend == "sync":
        from bandit_envs.sb3 import SB3VecEnv  # type: ignore[import-not-found]

        venv = SB3VecEnv(
            gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", **kwargs)
        )
        if seed is not None:
            venv.seed(seed)
    elif backend == "dummy":
        venv = DummyVecEnv([_env_fn(env_id, kwargs) for _ in range(num_envs)])
        if seed is not None:
            venv.seed(seed)
    else:
        raise ValueError(f"backend={backend!r} must be 'auto', 'native', 'sync' or 'dummy'")
    if transform is None:
        probe = gym.make(env_id, **kwargs)
        transform = FlatObservation.from_env(probe)
        probe.close()
    if reward == "posterior":
        if transform.prior is None or transform.k is None:
            raise ValueError("reward='posterior' needs a transform built with prior=(a, b)")
        if kwargs.get("budget") is None:
            raise ValueError("reward='posterior' needs a fixed-budget family (budget=...)")
        venv = VecPosteriorReward(venv, transform.prior, transform.k)
    elif reward != "env":
        raise ValueError(f"reward={reward!r} must be 'env' or 'posterior'")
    wrapped: VecEnv = VecFlatObservation(venv, transform)
    if reward_scale != 1.0:
        wrapped = VecScaleReward(wrapped, reward_scale)
    return wrapped, transform, backend


def _env_fn(env_id: str, kwargs: Mapping[str, Any]) -> Callable[[], gym.Env]:
    def make() -> gym.Env:
        return gym.make(env_id, **kwargs)

    return make
