"""Observation normalisation for learned policies: the ``Dict`` observation as a flat ``Box``.

The environments' observation (``counts`` int64, ``means`` float64, ``remaining``, and
``phase`` with ``answer="agent"``) is complete but badly scaled for a neural network:
counts run up to the budget and the means of an instance sit in a narrow band. One
object, :class:`FlatObservation`, does the normalisation as a plain function of an
observation dict, so the *same* code serves

* a single environment: :class:`FlattenTopKObservation` (a ``gym.ObservationWrapper``);
* a Gymnasium vector environment (the native ``TopKVectorEnv``/``TopKBatchVectorEnv`` of
  ``gym.make_vec(..., vectorization_mode="vector_entry_point")``, or a
  ``SyncVectorEnv``): :class:`FlattenTopKVectorObservation`; the transform works on
  batched arrays (any leading dimensions) and also transforms ``info["final_obs"]``
  under ``autoreset_mode=SAME_STEP``;
* evaluation: ``agents.PolicyAgent(model, obs_transform=transform)`` feeds the policy
  exactly the observation it was trained on;
* saving: :meth:`FlatObservation.config` is a JSON-able dict and
  :func:`transform_from_config` rebuilds the transform, so the config can be stored
  next to a saved model (``agents.learned.saving`` writes it into the model file and a JSON
  sidecar).

Features (``features=``), each one block of ``n_arms`` entries, in the order given:

=============  ===========================================  ===========
name           value for arm ``i``                          range
=============  ===========================================  ===========
``fraction``   ``counts[i] / count_scale`` (share of budget)   ``[0, 1]``
``log_count``  ``log1p(counts[i]) / log1p(count_scale)``    ``[0, 1]``
``mean``       ``(means[i] - c) * mean_scale``, 0 if unpulled  see below
``pulled``     ``1`` if ``counts[i] > 0`` else ``0``        ``{0, 1}``
``inv_sqrt``   ``1 / sqrt(counts[i] + 1)`` (width of a CI)  ``(0, 1]``
``post_gap``   posterior mean minus the opposing boundary   ``[-s, s]``
``post_std``   posterior standard deviation                 ``[0, s/2]``
``batch``      ``batch[i] / batch_scale``: pulls of arm ``i``  ``[0, 1]``
               in the batch being composed
               (``TopK-PullByPull-v0``)
=============  ===========================================  ===========

The two ``post_*`` features are posterior statistics under a known Beta(a, b) prior on
Bernoulli means (``prior=(a, b)``, with ``k``; the catalog's random families draw their
means so): arm ``i`` after ``s_i`` successes in ``n_i`` pulls has posterior mean
``m_i = (a + s_i) / (a + b + n_i)`` and standard deviation
``sqrt(m_i (1 - m_i) / (a + b + n_i + 1))``. ``post_gap`` is ``m_i - c_(k+1)`` for an
arm in the posterior top k (``m_i >= c_(k)``) and ``m_i - c_(k)`` otherwise, where
``c_(j)`` is the ``j``-th largest posterior mean: how far the arm is from changing
sides. Both are multiplied by ``s = 1 / sd(prior)``, so they are O(1).

``batch`` reads the ``batch`` key of ``TopK-PullByPull-v0``'s observation (the batch
being composed, or the answer's arms chosen so far), scaled by ``batch_scale`` (the
env's ``r``). :meth:`FlatObservation.from_env` adds it to the default features of that
env, so a flattened observation never hides the batch from the policy.

then ``remaining`` (1 entry) and, with ``phase=True``, ``phase`` (1 entry). The mean's
centre ``c`` is the average empirical mean of the pulled arms (``center_means=True``,
the default: features invariant to shifting every mean) or the middle of the reward
range; ``mean_scale`` defaults to ``2 / (reward_high - reward_low)`` (``1 / sigma`` for
Gaussian rewards), so a centred Bernoulli mean lies in ``[-2, 2]``. ``count_scale`` is
the pull budget (fixed budget) or ``max_batches * batch_size``.

No feature depends on the arm order beyond the arm's own position: the arms stay where
the environment puts them, so a policy's action refers to the same arm indices.

Example:
    >>> import gymnasium as gym, bandit_envs
    >>> from bandit_envs.wrappers import FlattenTopKObservation
    >>> env = FlattenTopKObservation(gym.make("TopK-v0", n_arms=4, k=2, budget=20))
    >>> obs, _ = env.reset(seed=0)
    >>> obs.shape, obs.dtype, env.observation_space.shape
    ((17,), dtype('float32'), (17,))
    >>> env.transform.config()["features"]
    ['fraction', 'log_count', 'mean', 'pulled']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper

__all__ = [
    "FEATURES",
    "FlatObservation",
    "FlattenTopKObservation",
    "FlattenTopKVectorObservation",
    "transform_from_config",
    "vector_action_masks",
]

#: The per-arm features :class:`FlatObservation` knows, with their bounds.
FEATURES: dict[str, tuple[float, float]] = {
    "fraction": (0.0, 1.0),
    "log_count": (0.0, 1.0),
    "mean": (-np.inf, np.inf),  # replaced by the configured bounds
    "pulled": (0.0, 1.0),
    "inv_sqrt": (0.0, 1.0),
    "post_gap": (-1.0, 1.0),  # times 1 / sd(prior)
    "post_std": (0.0, 0.5),  # times 1 / sd(prior)
    "batch": (0.0, 1.0),
}
POSTERIOR_FEATURES = ("post_gap", "post_std")
DEFAULT_FEATURES = ("fraction", "log_count", "mean", "pulled")
_KIND = "topk-flat-observation"
_VERSION = 1


class FlatObservation:
    """Callable ``observation dict -> float32 vector`` (see the module docstring).

    Args:
        n_arms: number of arms.
        count_scale: pulls that map to a ``fraction`` of 1 (the budget).
        features: per-arm feature blocks, in order (names from :data:`FEATURES`).
        center_means: subtract the average empirical mean of the pulled arms.
        mean_center: the centre when ``center_means=False`` (middle of the reward range).
        mean_scale: factor applied to the centred means.
        mean_bound: ``|mean feature| <= mean_bound`` (declared bound; ``inf`` allowed).
        phase: append the ``phase`` entry (environments with ``answer="agent"``).
        prior: ``(a, b)`` of a Beta prior on Bernoulli means (needed by ``post_*``).
        k: the size of the answer (needed by ``post_gap``).
        batch_scale: the count that maps to a ``batch`` feature of 1 (needed by
            ``batch``: the env's per-arm cap ``r``).

    Build it with :meth:`from_env` rather than by hand.
    """

    def __init__(
        self,
        n_arms: int,
        count_scale: float,
        *,
        features: Sequence[str] = DEFAULT_FEATURES,
        center_means: bool = True,
        mean_center: float = 0.5,
        mean_scale: float = 2.0,
        mean_bound: float = 2.0,
        phase: bool = False,
        prior: Sequence[float] | None = None,
        k: int | None = None,
        batch_scale: float | None = None,
    ) -> None:
        if int(n_arms) != n_arms or n_arms < 2:
            raise ValueError(f"n_arms={n_arms!r} must be an integer >= 2")
        if not (math.isfinite(count_scale) and count_scale >= 1):
            raise ValueError(f"count_scale={count_scale!r} must be a finite number >= 1")
        features = tuple(features)
        if not features:
            raise ValueError("features must name at least one per-arm feature")
        for f in features:
            if f not in FEATURES:
                raise ValueError(f"unknown feature {f!r}; known: {', '.join(FEATURES)}")
        if len(set(features)) != len(features):
            raise ValueError(f"features {list(features)} repeat a name")
        if not (math.isfinite(mean_scale) and mean_scale > 0):
            raise ValueError(f"mean_scale={mean_scale!r} must be a finite number > 0")
        if not mean_bound > 0:
            raise ValueError(f"mean_bound={mean_bound!r} must be > 0 (inf allowed)")
        self.n_arms = int(n_arms)
        self.count_scale = float(count_scale)
        self.features = features
        self.center_means = bool(center_means)
        self.mean_center = float(mean_center)
        self.mean_scale = float(mean_scale)
        self.mean_bound = float(mean_bound)
        self.phase = bool(phase)
        self.prior, self.k, self.post_scale = _check_prior(prior, k, self.n_arms, features)
        if ("batch" in features) != (batch_scale is not None):
            raise ValueError(
                f"batch_scale={batch_scale!r}: the 'batch' feature needs batch_scale (the "
                "env's repeat_limit r), and batch_scale is used only by it"
            )
        if batch_scale is not None and not (math.isfinite(batch_scale) and batch_scale >= 1):
            raise ValueError(f"batch_scale={batch_scale!r} must be a finite number >= 1")
        self.batch_scale = None if batch_scale is None else float(batch_scale)
        self._log_scale = math.log1p(self.count_scale)
        n = self.n_arms
        low, high = [], []
        for f in features:
            lo, hi = (-self.mean_bound, self.mean_bound) if f == "mean" else FEATURES[f]
            if f in POSTERIOR_FEATURES:
                lo, hi = lo * self.post_scale, hi * self.post_scale
            low += [lo] * n
            high += [hi] * n
        low.append(0.0)
        high.append(1.0)
        if self.phase:
            low.append(0.0)
            high.append(1.0)
        self.observation_space = spaces.Box(
            np.array(low, dtype=np.float32), np.array(high, dtype=np.float32), dtype=np.float32
        )

    # ------------------------------------------------------------- building
    @classmethod
    def from_env(cls, env: gym.Env | VectorEnv, **options: Any) -> FlatObservation:
        """The transform for ``env`` (a single or vector ``TopK`` env, wrapped or not).

        Reads ``n_arms``, the budget, the reward range and ``answer`` from the
        environment's :class:`~bandit_envs.problem.Problem`; ``options`` override
        the keyword arguments of the constructor (e.g. ``features=[...]``).
        """
        return cls.from_problem(_problem_of(env), **options)

    @classmethod
    def from_problem(cls, problem: Any, **options: Any) -> FlatObservation:
        """The transform for a :class:`~bandit_envs.problem.Problem`."""
        if problem.budget is not None:
            count_scale = float(problem.budget)
        elif problem.max_batches is not None and problem.batch_size is not None:
            count_scale = float(problem.max_batches * problem.batch_size)
        else:
            raise ValueError(
                "the observation transform needs a finite pull budget (fixed budget, or "
                "max_batches with a batch_size); pass count_scale= explicitly"
            )
        low, high = float(problem.reward_low), float(problem.reward_high)
        if math.isfinite(low) and math.isfinite(high) and high > low:
            center, scale, bound = (low + high) / 2, 2.0 / (high - low), 2.0
        else:
            sigma = float(problem.sigma) if problem.sigma else 1.0
            center, scale, bound = 0.0, 1.0 / sigma, math.inf
        kwargs: dict[str, Any] = {
            "count_scale": count_scale,
            "mean_center": center,
            "mean_scale": scale,
            "mean_bound": bound,
            "phase": problem.answer == "agent",
        }
        if getattr(problem, "action_format", "pulls") == "pull":  # TopK-PullByPull-v0
            r = problem.repeat_limit if problem.repeat_limit is not None else problem.budget
            kwargs["features"] = tuple(options.get("features", (*DEFAULT_FEATURES, "batch")))
            if "batch" in kwargs["features"]:
                kwargs["batch_scale"] = float(r)
        kwargs.update(options)
        if kwargs.get("prior") is not None:
            if problem.distribution != "bernoulli":
                raise ValueError(
                    f"prior={kwargs['prior']!r} is a Beta prior on Bernoulli means; the "
                    f"problem's rewards are {problem.distribution!r}"
                )
            kwargs.setdefault("k", problem.k)
        return cls(problem.n_arms, **kwargs)

    # ---------------------------------------------------------- serialising
    def config(self) -> dict[str, Any]:
        """A JSON-able dict that :func:`transform_from_config` turns back into ``self``."""
        return {
            "kind": _KIND,
            "version": _VERSION,
            "n_arms": self.n_arms,
            "count_scale": self.count_scale,
            "features": list(self.features),
            "center_means": self.center_means,
            "mean_center": self.mean_center,
            "mean_scale": self.mean_scale,
            "mean_bound": self.mean_bound if math.isfinite(self.mean_bound) else "inf",
            "phase": self.phase,
            # absent unless set: configs saved before these options rebuild unchanged
            **({"prior": list(self.prior)} if self.prior is not None else {}),
            **({"k": self.k} if self.k is not None else {}),
            **({"batch_scale": self.batch_scale} if self.batch_scale is not None else {}),
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FlatObservation) and self.config() == other.config()

    def __hash__(self) -> int:
        return hash(repr(sorted(self.config().items())))

    def __repr__(self) -> str:
        cfg = self.config()
        del cfg["kind"], cfg["version"]
        return f"FlatObservation({', '.join(f'{k}={v!r}' for k, v in cfg.items())})"

    # -------------------------------------------------------------- applying
    def __call__(self, observation: Mapping[str, Any]) -> np.ndarray:
        """Transform one observation (shape ``(dim,)``) or a batch (shape ``(..., dim)``)."""
        counts = np.asarray(observation["counts"])
        if counts.shape[-1:] != (self.n_arms,):
            raise ValueError(
                f"observation['counts'] has shape {counts.shape}; the transform expects "
                f"n_arms={self.n_arms} on the last axis"
            )
        lead = counts.shape[:-1]
        counts = counts.astype(np.float64)
        means = np.asarray(observation["means"], dtype=np.float64)
        pulled = counts > 0
        post = self._posterior(counts, means) if self.post_scale else None
        blocks: list[np.ndarray] = []
        for f in self.features:
            if f == "fraction":
                blocks.append(counts / self.count_scale)
            elif f == "log_count":
                blocks.append(np.log1p(counts) / self._log_scale)
            elif f == "pulled":
                blocks.append(pulled.astype(np.float64))
            elif f == "inv_sqrt":
                blocks.append(1.0 / np.sqrt(counts + 1.0))
            elif f == "post_gap":
                assert post is not None
                blocks.append(post[0] * self.post_scale)
            elif f == "post_std":
                assert post is not None
                blocks.append(post[1] * self.post_scale)
            elif f == "batch":
                if "batch" not in observation:
                    raise ValueError(
                        "the 'batch' feature reads observation['batch'] (TopK-PullByPull-v0); "
                        "the observation has none"
                    )
                assert self.batch_scale is not None
                batch = np.asarray(observation["batch"], dtype=np.float64)
                blocks.append(batch / self.batch_scale)
            else:  # "mean"
                if self.center_means:
                    n_pulled = pulled.sum(axis=-1, keepdims=True)
                    total = np.where(pulled, means, 0.0).sum(axis=-1, keepdims=True)
                    center = np.divide(
                        total, n_pulled, out=np.zeros_like(total), where=n_pulled > 0
                    )
                else:
                    center = self.mean_center
                m = np.where(pulled, (means - center) * self.mean_scale, 0.0)
                if math.isfinite(self.mean_bound):
                    m = np.clip(m, -self.mean_bound, self.mean_bound)
                blocks.append(m)
        blocks.append(np.asarray(observation["remaining"], dtype=np.float64).reshape(*lead, 1))
        if self.phase:
            if "phase" not in observation:
                raise ValueError(
                    "the transform was built with phase=True but the observation has no 'phase'"
                )
            blocks.append(np.asarray(observation["phase"], dtype=np.float64).reshape(*lead, 1))
        return np.concatenate(blocks, axis=-1).astype(np.float32)

    def _posterior(self, counts: np.ndarray, means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(post_gap, post_std)`` before scaling (see the module docstring)."""
        assert self.prior is not None and self.k is not None
        a, b = self.prior
        wins = np.rint(means * counts)
        m = (a + wins) / (a + b + counts)
        std = np.sqrt(m * (1.0 - m) / (a + b + counts + 1.0))
        ordered = np.sort(m, axis=-1)
        kth = ordered[..., -self.k, None]
        next_ = ordered[..., -self.k - 1, None]
        return np.where(m >= kth, m - next_, m - kth), std


def _check_prior(
    prior: Sequence[float] | None, k: int | None, n_arms: int, features: Sequence[str]
) -> tuple[tuple[float, float] | None, int | None, float]:
    """Check ``prior`` and ``k``; returns them and ``1 / sd(prior)`` (0 without a prior)."""
    wanted = [f for f in features if f in POSTERIOR_FEATURES]
    if prior is None:
        if wanted:
            raise ValueError(f"features {wanted} need prior=(a, b): a Beta prior on the means")
        if k is not None:
            raise ValueError(f"k={k!r} is only used with prior=(a, b)")
        return None, None, 0.0
    values = list(prior)
    if len(values) != 2 or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < math.inf for v in values
    ):
        raise ValueError(f"prior={prior!r} must be (a, b), two positive finite numbers")
    if k is None or int(k) != k or not 1 <= k < n_arms:
        raise ValueError(f"k={k!r} must be an integer in [1, n_arms - 1] = [1, {n_arms - 1}]")
    a, b = float(values[0]), float(values[1])
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    return (a, b), int(k), 1.0 / sd


def transform_from_config(config: Mapping[str, Any]) -> FlatObservation:
    """Rebuild the transform saved with :meth:`FlatObservation.config`."""
    cfg = dict(config)
    kind = cfg.pop("kind", _KIND)
    version = cfg.pop("version", _VERSION)
    if kind != _KIND:
        raise ValueError(f"observation transform kind {kind!r} is not {_KIND!r}")
    if version != _VERSION:
        raise ValueError(
            f"observation transform version {version!r} is not supported (expected {_VERSION})"
        )
    if cfg.get("mean_bound") == "inf":
        cfg["mean_bound"] = math.inf
    n_arms = cfg.pop("n_arms")
    count_scale = cfg.pop("count_scale")
    return FlatObservation(n_arms, count_scale, **cfg)


def _problem_of(env: Any) -> Any:
    """The :class:`Problem` of a (wrapped) single or vector TopK environment."""
    seen = env
    while seen is not None:
        problem = getattr(seen, "problem", None)
        if problem is not None:
            return problem
        seen = getattr(seen, "env", None)
    unwrapped = getattr(env, "unwrapped", None)
    problem = getattr(unwrapped, "problem", None)
    if problem is None:
        envs = getattr(unwrapped, "envs", None)  # SyncVectorEnv
        if envs:
            problem = getattr(envs[0].unwrapped, "problem", None)
    if problem is None:
        raise TypeError(f"{env!r} is not a bandit_envs environment (no .problem)")
    return problem


def _resolve(
    env: Any, transform: FlatObservation | Mapping[str, Any] | None, options: Any
) -> FlatObservation:
    if transform is None:
        return FlatObservation.from_env(env, **options)
    if options:
        raise ValueError("pass either transform= or options, not both")
    if isinstance(transform, Mapping):
        return transform_from_config(transform)
    if not isinstance(transform, FlatObservation):
        raise TypeError(f"transform={transform!r} must be a FlatObservation or its config()")
    return transform


class FlattenTopKObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """A single ``TopK`` env whose observation is :class:`FlatObservation`'s vector.

    Args:
        env: a ``TopK-v0`` or ``TopK-Batch-v0`` environment.
        transform: the transform to apply (or its :meth:`~FlatObservation.config`);
            built with :meth:`FlatObservation.from_env` and ``options`` when not given.
        **options: constructor arguments of :class:`FlatObservation`.

    The env spec records the transform's config, so ``gym.make(env.spec)`` rebuilds
    the wrapped env.
    """

    def __init__(
        self,
        env: gym.Env,
        transform: FlatObservation | Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None:
        resolved = _resolve(env, transform, options)
        gym.utils.RecordConstructorArgs.__init__(self, transform=resolved.config())
        gym.ObservationWrapper.__init__(self, env)
        self.transform = resolved
        self.observation_space = resolved.observation_space

    def observation(self, observation: Mapping[str, Any]) -> np.ndarray:
        """The flat vector of ``observation``."""
        return self.transform(observation)


class FlattenTopKVectorObservation(VectorWrapper):
    """A Gymnasium vector env of ``TopK`` envs with :class:`FlatObservation` observations.

    Works on the native vector envs and on ``SyncVectorEnv``/``AsyncVectorEnv`` in every
    autoreset mode. Under ``SAME_STEP`` autoreset the final observations in
    ``info["final_obs"]`` (what SB3 calls ``terminal_observation``) are transformed too,
    so that bootstrapping sees the training observation.

    Args:
        env: the vector environment.
        transform: as for :class:`FlattenTopKObservation`.
        **options: constructor arguments of :class:`FlatObservation`.
    """

    def __init__(
        self,
        env: VectorEnv,
        transform: FlatObservation | Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(env)
        transform = _resolve(env, transform, options)
        self.transform = transform
        self.single_observation_space = transform.observation_space
        self.observation_space = gym.vector.utils.batch_space(
            transform.observation_space, env.num_envs
        )

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset, transforming the observations."""
        obs, infos = self.env.reset(seed=seed, options=options)
        return self.transform(obs), infos

    def step(self, actions: Any) -> tuple[np.ndarray, Any, Any, Any, dict[str, Any]]:
        """Step, transforming the observations (and ``info["final_obs"]``)."""
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        if "final_obs" in infos:
            infos = dict(infos)
            infos["final_obs"] = self._final(infos["final_obs"])
        return self.transform(obs), rewards, terminations, truncations, infos

    def action_masks(self) -> np.ndarray:
        """The wrapped vector env's action masks (:func:`vector_action_masks`)."""
        return vector_action_masks(self.env)

    def _final(self, final: Any) -> Any:
        if isinstance(final, Mapping):  # a batched dict
            return self.transform(final)
        out = np.full(len(final), None, dtype=object)
        for i, o in enumerate(final):
            if o is not None:
                out[i] = self.transform(o)
        return out


def vector_action_masks(envs: VectorEnv) -> np.ndarray:
    """``action_masks()`` of every env of a vector env, one row each.

    The native vector envs (through any wrappers) compute them at once; a
    ``SyncVectorEnv``/``AsyncVectorEnv`` asks each env (``envs.call("action_masks")``)
    and stacks the answers. An env whose episode ended has no valid action; under
    ``NEXT_STEP`` autoreset its next step only restarts it, ignoring its action, so its
    row allows every action (as the native vector envs' rows do).
    """
    base = envs.unwrapped
    masks = getattr(base, "action_masks", None)
    if callable(masks):
        return np.asarray(masks())
    rows = np.stack(envs.call("action_masks"))
    if envs.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP) == AutoresetMode.NEXT_STEP:
        rows[~rows.any(axis=1)] = True
    return rows
