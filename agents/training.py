"""Train stable-baselines3 policies on ``TopK-v0``/``TopK-Batch-v0`` and play them as agents.

:func:`train` is what ``examples/train_ppo.py`` and ``topk-bench train`` call
(:func:`add_train_arguments` / :func:`train_from_args` give a CLI the same options). It
builds a vector environment (the native vector env through ``bandit_envs.sb3`` when
present, else SB3's ``DummyVecEnv``), normalises the observation with
:class:`bandit_envs.wrappers.FlatObservation`, trains PPO or A2C with
:class:`ArmSetPolicy` (one network shared by all arms) or DQN with SB3's ``MlpPolicy``
(DQN only on the ``Discrete`` action space of ``TopK-v0``) on the CPU, with an optional
progress bar, wall-clock or CPU-time limit and periodic evaluation, and saves the model.

A saved model carries what is needed to play it again (:func:`policy_metadata`): the
observation transform's config, the ``PolicyAgent`` arguments (how it answers, whether
it samples) and the environment it was trained on. The metadata is stored twice: as
the attribute ``topk_policy`` inside SB3's zip (``PPO.load`` restores it, so
``agents.make("ppo:PATH")`` has it in ``agent.policy.topk_policy``) and as a JSON
sidecar ``<model>.json`` for people and tools. :func:`load_policy` turns a saved model
into an :class:`agents.PolicyAgent` that sees exactly the training observation.

Evaluation (periodic, :func:`evaluate`, :func:`compare`) goes through
:func:`agents.run_episode` on the environment the benchmark runner uses
(:func:`evaluation_env`): ``TopK-Batch-v0`` with ``answer="agent"`` and ``paired=True``,
a ``TopK-v0`` family being the same problem with ``batch_size=1``. Scripted agents and
learned policies then play the same episodes for the same seeds.

Seeds: the training envs are reset once with ``seed`` (native vector env: one generator
for all envs; ``DummyVecEnv``/``SyncVectorEnv``: env ``i`` gets ``seed + i``) and then
continue their own streams; periodic evaluation uses the seeds
:data:`VALIDATION_SEED0` + ``j``; held-out evaluation uses :data:`TEST_SEED0` + ``j``.
"""

from __future__ import annotations

import copy
import json
import math
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3 import A2C, DQN, PPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn
from torch import nn

import bandit_envs  # noqa: F401  (registers the ids)
from agents.base import Agent
from agents.policy import PolicyAgent
from agents.runner import EpisodeResult, run_episode
from bandit_envs.wrappers import FlatObservation, transform_from_config

__all__ = [
    "ALGOS",
    "ArmSetPolicy",
    "PRESETS",
    "TEST_SEED0",
    "VALIDATION_SEED0",
    "SampledPolicyAgent",
    "Summary",
    "TrainResult",
    "VecFlatObservation",
    "VecScaleReward",
    "add_train_arguments",
    "compare",
    "evaluate",
    "evaluation_env",
    "load_policy",
    "make_training_env",
    "policy_agent",
    "policy_metadata",
    "save_policy",
    "saved_agent_kwargs",
    "summarize",
    "train",
    "train_from_args",
]

ALGOS: dict[str, type[BaseAlgorithm]] = {"ppo": PPO, "a2c": A2C, "dqn": DQN}
VALIDATION_SEED0 = 100_000_000
TEST_SEED0 = 200_000_000
METADATA_FORMAT = "topk-bandit-envs/learned-policy"
METADATA_VERSION = 1

#: Instance families for learning (``learned-vs-scripted``): 10 Bernoulli arms with
#: means drawn from Beta(5, 5) per episode, k = 3, 200 pulls; one pull per step, or
#: batches of b = 10 pulls with at most r = 5 per arm (20 batches).
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "standard": (
        "TopK-v0",
        {
            "instance": "beta-random",
            "instance_params": {"a": 5.0, "b": 5.0},
            "n_arms": 10,
            "k": 3,
            "budget": 200,
        },
    ),
    "batch": (
        "TopK-Batch-v0",
        {
            "instance": "beta-random",
            "instance_params": {"a": 5.0, "b": 5.0},
            "n_arms": 10,
            "k": 3,
            "budget": 200,
            "batch_size": 10,
            "repeat_limit": 5,
            "invalid_action": "project",
        },
    ),
}

#: Defaults per algorithm (overridden by ``algo_kwargs``). Episodes end with one
#: terminal reward, so the discount is close to 1.
_ALGO_DEFAULTS: dict[str, dict[str, Any]] = {
    "ppo": {
        "n_steps": 256,
        "batch_size": 512,
        "n_epochs": 5,
        "gamma": 0.999,
        "gae_lambda": 0.95,
        "learning_rate": 3e-4,
        "ent_coef": 0.0,
    },
    "a2c": {
        "n_steps": 16,
        "gamma": 0.999,
        "gae_lambda": 0.95,
        "learning_rate": 7e-4,
        "ent_coef": 0.0,
    },
    "dqn": {
        "buffer_size": 100_000,
        "learning_starts": 2_000,
        "batch_size": 128,
        "gamma": 0.999,
        "train_freq": 4,
        "target_update_interval": 2_000,
        "exploration_fraction": 0.3,
        "exploration_final_eps": 0.02,
        "learning_rate": 2.5e-4,
    },
}


# ------------------------------------------------------------------------- policy
class _ArmSetTrunk(nn.Module):
    """DeepSets layers over arms: ``h_i <- relu(A h_i + B mean_j h_j + C max_j h_j + D g)``."""

    def __init__(self, per_arm: int, n_global: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList()
        width = per_arm
        for _ in range(layers):
            self.layers.append(nn.Linear(3 * width + n_global, hidden))
            width = hidden

    def forward(self, arms: torch.Tensor, glob: torch.Tensor) -> torch.Tensor:
        h = arms  # (B, n, F)
        n = h.shape[1]
        g = glob.unsqueeze(1).expand(-1, n, -1)
        for layer in self.layers:
            mean = h.mean(dim=1, keepdim=True).expand(-1, n, -1)
            top = h.max(dim=1, keepdim=True).values.expand(-1, n, -1)
            h = torch.relu(layer(torch.cat((h, mean, top, g), dim=-1)))
        return h


class _ArmSetNet(nn.Module):
    """The ``mlp_extractor`` of :class:`ArmSetPolicy`: per-arm logits and a pooled value latent."""

    def __init__(
        self,
        n_arms: int,
        per_arm: int,
        n_global: int,
        logits_per_arm: int,
        stop: bool,
        hidden: int,
        layers: int,
    ) -> None:
        super().__init__()
        self.n_arms, self.per_arm = n_arms, per_arm
        self.pi = _ArmSetTrunk(per_arm, n_global, hidden, layers)
        self.vf = _ArmSetTrunk(per_arm, n_global, hidden, layers)
        self.pi_head = nn.Linear(hidden, logits_per_arm)
        self.stop_head = nn.Linear(2 * hidden + n_global, 1) if stop else None
        self.latent_dim_pi = n_arms * logits_per_arm + int(stop)
        self.latent_dim_vf = 2 * hidden + n_global

    def _split(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n, f = self.n_arms, self.per_arm
        arms = features[:, : n * f].reshape(-1, f, n).transpose(1, 2)
        return arms, features[:, n * f :]

    @staticmethod
    def _pool(h: torch.Tensor, glob: torch.Tensor) -> torch.Tensor:
        return torch.cat((h.mean(dim=1), h.max(dim=1).values, glob), dim=-1)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        arms, glob = self._split(features)
        h = self.pi(arms, glob)
        logits = self.pi_head(h).reshape(h.shape[0], -1)  # arm-major, as MultiCategorical wants
        if self.stop_head is not None:
            logits = torch.cat((logits, self.stop_head(self._pool(h, glob))), dim=-1)
        return logits

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        arms, glob = self._split(features)
        return self._pool(self.vf(arms, glob), glob)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class ArmSetPolicy(ActorCriticPolicy):
    """An actor-critic policy that treats the arms as a set (permutation-equivariant).

    The flat observation of :class:`~bandit_envs.wrappers.FlatObservation` is read as
    ``n_arms`` rows of ``arm_features`` per-arm features plus the global entries
    (``remaining``, ``phase``). Every arm goes through the same DeepSets layers (its own
    features, the mean and max over arms, the global entries), so a rule learned for one
    arm holds for all, and permuting the arms permutes the action distribution. The
    actor gives each arm its logits (``Discrete(n)``: one; ``MultiDiscrete([r+1]*n)``:
    ``r + 1``; the stop action of ``Discrete(n + 1)`` gets a pooled logit); the critic
    reads the pooled features. For PPO and A2C; :func:`train` fills the layout in.

    Args:
        n_arms: number of arms.
        arm_features: per-arm features (feature-major blocks of ``n_arms`` entries).
        hidden: width of the per-arm layers.
        layers: number of DeepSets layers.
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        lr_schedule: Any,
        *,
        n_arms: int,
        arm_features: int,
        hidden: int = 64,
        layers: int = 2,
        **kwargs: Any,
    ) -> None:
        self.n_arms, self.arm_features, self.hidden, self.n_layers = (
            n_arms,
            arm_features,
            hidden,
            layers,
        )
        n_global = int(np.prod(observation_space.shape)) - n_arms * arm_features
        if n_global < 0:
            raise ValueError(
                f"observation of size {observation_space.shape} is too small for "
                f"{n_arms} arms x {arm_features} features"
            )
        self.n_global = n_global
        if isinstance(action_space, spaces.Discrete) and action_space.n in (n_arms, n_arms + 1):
            self._logits_per_arm, self._stop = 1, action_space.n == n_arms + 1
        elif (
            isinstance(action_space, spaces.MultiDiscrete)
            and action_space.nvec.shape == (n_arms,)
            and len(set(action_space.nvec.tolist())) == 1
        ):
            self._logits_per_arm, self._stop = int(action_space.nvec[0]), False
        else:
            raise ValueError(f"ArmSetPolicy cannot act in {action_space} with n_arms={n_arms}")
        kwargs.setdefault("net_arch", [])
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = _ArmSetNet(
            self.n_arms,
            self.arm_features,
            self.n_global,
            self._logits_per_arm,
            self._stop,
            self.hidden,
            self.n_layers,
        )

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        # the per-arm head gives the logits directly; small initial logits (near-uniform policy)
        self.action_net = nn.Identity()
        heads = [self.mlp_extractor.pi_head] + [
            h for h in (self.mlp_extractor.stop_head,) if h is not None
        ]
        for head in heads:
            nn.init.orthogonal_(head.weight, gain=0.01)
            nn.init.zeros_(head.bias)
        self.optimizer = self.optimizer_class(
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(
            n_arms=self.n_arms,
            arm_features=self.arm_features,
            hidden=self.hidden,
            layers=self.n_layers,
        )
        return data


# --------------------------------------------------------------------------- envs
def evaluation_env(env_id: str, env_kwargs: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The benchmark form of a training family: ``TopK-Batch-v0``, ``answer="agent"``, paired.

    A ``TopK-v0`` family becomes ``TopK-Batch-v0`` with ``batch_size=1`` (the same
    problem; scripted agents need the batch id). A batch family keeps its kwargs with
    ``invalid_action="project"`` (a learned pull vector may exceed ``b``).
    """
    kwargs = dict(env_kwargs)
    kwargs.pop("render_mode", None)
    if env_id in ("TopK-v0", "bandit_envs:TopK-v0"):
        kwargs.update(batch_size=1, repeat_limit=1)
    elif env_id in ("TopK-Batch-v0", "bandit_envs:TopK-Batch-v0"):
        kwargs["invalid_action"] = "project"
    else:
        raise ValueError(f"env_id={env_id!r} must be 'TopK-v0' or 'TopK-Batch-v0'")
    kwargs["answer"] = "agent"
    kwargs["paired"] = True
    return "TopK-Batch-v0", kwargs


def _training_kwargs(env_id: str, env_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    kwargs = dict(env_kwargs or {})
    if env_id.endswith("TopK-Batch-v0"):
        if kwargs.setdefault("invalid_action", "project") != "project":
            raise ValueError("training on TopK-Batch-v0 needs invalid_action='project'")
    elif not env_id.endswith("TopK-v0"):
        raise ValueError(f"env_id={env_id!r} must be 'TopK-v0' or 'TopK-Batch-v0'")
    kwargs.setdefault("shuffle", True)
    if not kwargs["shuffle"]:
        warnings.warn(
            "shuffle=False: the policy may learn the arm order instead of the problem", stacklevel=3
        )
    kwargs["render_mode"] = None
    return kwargs


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
) -> tuple[VecEnv, FlatObservation, str]:
    """An SB3 ``VecEnv`` of ``num_envs`` copies of ``env_id`` with flat observations.

    Args:
        env_id: ``"TopK-v0"`` or ``"TopK-Batch-v0"``.
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

    Returns:
        ``(vec_env, transform, backend_used)``.
    """
    kwargs = _training_kwargs(env_id, env_kwargs)
    if num_envs < 1:
        raise ValueError(f"num_envs={num_envs} must be >= 1")
    native = _native_factory()
    if backend == "auto":
        backend = "native" if native is not None else "dummy"
    if backend == "native":
        if native is None:
            raise ImportError(
                "backend='native' needs bandit_envs.sb3 (the native vector env adapter)"
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
    wrapped: VecEnv = VecFlatObservation(venv, transform)
    if reward_scale != 1.0:
        wrapped = VecScaleReward(wrapped, reward_scale)
    return wrapped, transform, backend


def _env_fn(env_id: str, kwargs: Mapping[str, Any]) -> Callable[[], gym.Env]:
    def make() -> gym.Env:
        return gym.make(env_id, **kwargs)

    return make


# ------------------------------------------------------------------ saving, loading
def policy_metadata(
    algo: str,
    env_id: str,
    env_kwargs: Mapping[str, Any],
    transform: FlatObservation,
    training: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What a saved model needs to be played again (JSON-able)."""
    kwargs = {k: v for k, v in env_kwargs.items() if k != "render_mode"}
    if env_id.endswith("TopK-v0"):
        answer = "empirical"  # a scalar policy never answers
    else:
        answer = "policy" if kwargs.get("answer") == "agent" else "empirical"
    eval_id, eval_kwargs = evaluation_env(env_id, kwargs)
    return {
        "format": METADATA_FORMAT,
        "version": METADATA_VERSION,
        "algo": algo,
        "env_id": env_id,
        "env_kwargs": _jsonable(kwargs),
        "obs_transform": transform.config(),
        "policy_agent": {"answer": answer, "deterministic": True},
        "evaluation_env": {"env_id": eval_id, "env_kwargs": _jsonable(eval_kwargs)},
        "training": _jsonable(dict(training or {})),
    }


def _jsonable(value: Any) -> Any:
    return json.loads(
        json.dumps(value, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
    )


def _sidecar(path: str | Path) -> Path:
    p = Path(path)
    return p.with_suffix(".json") if p.suffix == ".zip" else p.with_name(p.name + ".json")


def save_policy(model: BaseAlgorithm, path: str | Path, metadata: Mapping[str, Any]) -> Path:
    """Save ``model`` to ``path`` (``.zip`` added if missing) with its metadata.

    The metadata goes into the zip (attribute ``topk_policy``) and into the sidecar
    ``<path without .zip>.json``. Returns the zip's path.
    """
    path = Path(path)
    if path.suffix != ".zip":
        path = path.with_name(path.name + ".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    model.topk_policy = dict(metadata)  # type: ignore[attr-defined]
    model.save(path)
    _sidecar(path).write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n")
    return path


def saved_agent_kwargs(model: Any, path: str | Path | None = None) -> dict[str, Any]:
    """``PolicyAgent`` keyword arguments stored with a saved model (empty if none).

    Reads the ``topk_policy`` attribute restored by ``Model.load``, else the JSON
    sidecar next to ``path``. Returns ``obs_transform``, ``answer`` and
    ``deterministic`` (``False``: play with :class:`SampledPolicyAgent`).
    """
    meta = getattr(model, "topk_policy", None)
    if meta is None and path is not None and _sidecar(path).exists():
        meta = json.loads(_sidecar(path).read_text())
    if not meta:
        return {}
    if meta.get("format") != METADATA_FORMAT:
        raise ValueError(f"model metadata format {meta.get('format')!r} is not {METADATA_FORMAT!r}")
    out: dict[str, Any] = {}
    if meta.get("obs_transform"):
        out["obs_transform"] = transform_from_config(meta["obs_transform"])
    out.update(meta.get("policy_agent", {}))
    return out


class SampledPolicyAgent(PolicyAgent):
    """A :class:`PolicyAgent` that *samples* an SB3 actor-critic policy's action.

    SB3's ``predict(deterministic=False)`` draws from torch's global generator, so
    results would depend on what ran before. This agent draws from its own generator,
    seeded by ``reset(problem, seed=...)`` like every agent: the same seed gives the
    same episode. (``deterministic=True`` takes each arm's most likely count, which for
    a near-uniform factorised policy can be a degenerate action, e.g. all zeros = stop.)
    """

    def __init__(self, policy: Any, **kwargs: Any) -> None:
        kwargs["deterministic"] = False
        super().__init__(policy, **kwargs)
        if not hasattr(getattr(policy, "policy", None), "get_distribution"):
            raise TypeError(
                f"{policy!r} has no action distribution to sample (PPO/A2C models have one)"
            )

    def _predict(self, observation: Mapping[str, Any]) -> np.ndarray:
        obs: Any = observation
        if self._keys is not None:
            obs = {key: observation[key] for key in self._keys}
        if self.obs_transform is not None:
            obs = self.obs_transform(obs)
        net = self.policy.policy
        with torch.no_grad():
            tensor, vectorized = net.obs_to_tensor(obs)
            dist = net.get_distribution(tensor).distribution
        parts = dist if isinstance(dist, list) else [dist]
        probs = [d.probs[0].numpy().astype(np.float64) for d in parts]
        u = self.rng.random(len(probs))
        action = np.array(
            [
                min(int(np.searchsorted(np.cumsum(p), x * p.sum(), side="right")), p.size - 1)
                for p, x in zip(probs, u, strict=True)
            ],
            dtype=np.int64,
        )
        return action if isinstance(dist, list) else action.reshape(())


def policy_agent(
    model: Any, transform: FlatObservation | None, answer: str, **kwargs: Any
) -> PolicyAgent:
    """A :class:`PolicyAgent` playing ``model`` with the training observation.

    ``deterministic=False`` gives a :class:`SampledPolicyAgent` (seeded sampling).
    """
    if not kwargs.pop("deterministic", True):
        return SampledPolicyAgent(model, obs_transform=transform, answer=answer, **kwargs)
    return PolicyAgent(model, obs_transform=transform, answer=answer, deterministic=True, **kwargs)


def load_policy(path: str | Path, algo: str | None = None, **kwargs: Any) -> PolicyAgent:
    """Load a model saved by :func:`save_policy` as a :class:`PolicyAgent` (CPU).

    ``algo`` defaults to the one in the metadata; ``kwargs`` override the stored
    ``PolicyAgent`` arguments. The agent runs the network on one observation per step:
    call ``torch.set_num_threads(1)`` first (with more threads each call is several
    times slower, about 10x on a busy 2-core machine).
    """
    path = Path(path)
    if algo is None:
        side = _sidecar(path)
        if not side.exists():
            raise ValueError(f"no metadata next to {path}: pass algo='ppo'/'a2c'/'dqn'")
        algo = json.loads(side.read_text())["algo"]
    model = ALGOS[algo].load(path, device="cpu")
    params = saved_agent_kwargs(model, path)
    params.update(kwargs)
    params.setdefault("name", f"{algo}:{path}")
    transform = params.pop("obs_transform", None)
    answer = params.pop("answer", "auto")
    return policy_agent(model, transform, answer, **params)


# ------------------------------------------------------------------ evaluation
@dataclass(frozen=True)
class Summary:
    """Mean aggregate regret and misidentification rate with 95% intervals."""

    agent: str
    episodes: int
    regret: float
    regret_ci: float  # half-width, normal approximation
    misid: float
    misid_low: float  # Wilson score interval
    misid_high: float
    pulls: float

    def row(self) -> str:
        """One Markdown table row."""
        return (
            f"| {self.agent} | {self.episodes} | {self.regret:.4f} ± {self.regret_ci:.4f} | "
            f"{self.misid:.3f} [{self.misid_low:.3f}, {self.misid_high:.3f}] | {self.pulls:.0f} |"
        )


def summarize(agent: str, results: Sequence[EpisodeResult]) -> Summary:
    """:class:`Summary` of ``results``."""
    n = len(results)
    if n == 0:
        raise ValueError("no results to summarize")
    regret = np.array([r.aggregate_regret for r in results])
    mis = np.array([r.misidentified for r in results], dtype=float)
    ci = 1.96 * regret.std(ddof=1) / math.sqrt(n) if n > 1 else math.inf
    p, z = mis.mean(), 1.96
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Summary(
        agent,
        n,
        float(regret.mean()),
        float(ci),
        float(p),
        float(max(0.0, centre - half)),
        float(min(1.0, centre + half)),
        float(np.mean([r.pulls for r in results])),
    )


def evaluate(
    agent: Agent | Callable[[], Agent],
    env_id: str,
    env_kwargs: Mapping[str, Any],
    seeds: Iterable[int],
) -> list[EpisodeResult]:
    """Play ``agent`` (or a fresh one from a factory) for each seed with :func:`run_episode`.

    ``env_id``/``env_kwargs`` are used as given: pass :func:`evaluation_env` of a
    training family to compare with scripted agents.
    """
    env = gym.make(env_id, **env_kwargs)
    player = agent if isinstance(agent, Agent) else agent()
    try:
        return [run_episode(env, player, seed=int(s)) for s in seeds]
    finally:
        env.close()


# ------------------------------------------------------------------ callbacks
class _Progress(BaseCallback):
    """tqdm progress bar (SB3's own needs ``rich``)."""

    def __init__(self, total: int, desc: str) -> None:
        super().__init__()
        self.total, self.desc, self.bar = total, desc, None

    def _on_training_start(self) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=self.total, desc=self.desc, unit="step", mininterval=1.0)

    def _on_step(self) -> bool:
        self.bar.update(self.training_env.num_envs)
        return True

    def set_postfix(self, **values: Any) -> None:
        if self.bar is not None:
            self.bar.set_postfix(values, refresh=False)

    def _on_training_end(self) -> None:
        self.bar.close()


class _TimeLimit(BaseCallback):
    """Stop after ``seconds`` of wall-clock time, or of this process's CPU time.

    ``exclude()`` returns seconds not to count (the CPU time of periodic evaluation).
    """

    def __init__(
        self, seconds: float, cpu: bool = False, exclude: Callable[[], float] | None = None
    ) -> None:
        super().__init__()
        self.seconds = seconds
        self.clock = time.process_time if cpu else time.perf_counter
        self.exclude = exclude or (lambda: 0.0)
        self.start = 0.0

    def _on_training_start(self) -> None:
        self.start = self.clock()

    def _on_step(self) -> bool:
        return self.clock() - self.start - self.exclude() < self.seconds


class _PeriodicEval(BaseCallback):
    """Every ``every`` steps: play ``episodes`` validation seeds through ``PolicyAgent``.

    ``modes`` are the ways to play the policy: ``"deterministic"`` (SB3's most likely
    action) and/or ``"sampled"`` (:class:`SampledPolicyAgent`). ``cpu_spent`` is the
    CPU time spent evaluating (not counted against a CPU budget).
    """

    def __init__(
        self,
        every: int,
        episodes: int,
        env_id: str,
        env_kwargs: Mapping[str, Any],
        transform: FlatObservation,
        answer: str,
        modes: Sequence[str],
        log: Callable[[str], None],
        progress: _Progress | None,
        best_path: Path | None,
        metadata: Mapping[str, Any] | None,
    ) -> None:
        super().__init__()
        self.every, self.episodes, self.modes = every, episodes, tuple(modes)
        self.env = gym.make(env_id, **env_kwargs)
        self.transform, self.answer, self.log, self.progress = transform, answer, log, progress
        self.best_path, self.metadata = best_path, metadata
        self.history: list[dict[str, Any]] = []
        self.start = 0.0
        self.cpu_spent = 0.0
        self._next = every

    def _on_training_start(self) -> None:
        self.start = time.perf_counter()

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next += self.every
            self.run()
        return True

    def run(self) -> dict[str, Any]:
        cpu = time.process_time()
        seeds = range(VALIDATION_SEED0, VALIDATION_SEED0 + self.episodes)
        entry: dict[str, Any] = {
            "timesteps": int(self.num_timesteps),
            "seconds": round(time.perf_counter() - self.start, 1),
        }
        parts = []
        for mode in self.modes:
            agent = policy_agent(
                self.model, self.transform, self.answer, deterministic=mode == "deterministic"
            )
            s = summarize(mode, [run_episode(self.env, agent, seed=x) for x in seeds])
            entry[mode] = {"regret": s.regret, "regret_ci": s.regret_ci, "misid": s.misid}
            parts.append(f"{mode} regret {s.regret:.4f} ± {s.regret_ci:.4f}, misid {s.misid:.3f}")
        # The mode this checkpoint would play, and its regret: what keep_best compares.
        entry["mode"] = "deterministic" if _keep_deterministic(entry) else "sampled"
        entry["regret"] = entry[entry["mode"]]["regret"]
        best = min((h["regret"] for h in self.history), default=math.inf)
        self.history.append(entry)
        self.log(
            f"eval t={entry['timesteps']} ({entry['seconds']}s): {'; '.join(parts)} "
            f"({self.episodes} validation episodes)"
        )
        if self.progress is not None:
            self.progress.set_postfix(regret=f"{entry['regret']:.4f}", mode=entry["mode"])
        if self.best_path is not None and entry["regret"] < best:
            meta = copy.deepcopy(dict(self.metadata or {}))
            meta["training"] = {**meta.get("training", {}), "best_at": entry}
            meta["policy_agent"]["deterministic"] = _keep_deterministic(entry)
            save_policy(self.model, self.best_path, meta)
        self.cpu_spent += time.process_time() - cpu
        return entry


def _keep_deterministic(entry: Mapping[str, Any]) -> bool:
    """Sample only if the validation says so clearly (see ``train(sample=None)``)."""
    det, sam = entry.get("deterministic"), entry.get("sampled")
    if det is None:
        return False
    if sam is None:
        return True
    return not sam["regret"] < det["regret"] - det["regret_ci"]


# ------------------------------------------------------------------ training
@dataclass
class TrainResult:
    """What :func:`train` returns."""

    model: BaseAlgorithm
    transform: FlatObservation
    metadata: dict[str, Any]
    path: Path | None = None
    best_path: Path | None = None
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    timesteps: int = 0
    seconds: float = 0.0

    def agent(self, **kwargs: Any) -> PolicyAgent:
        """The trained model as a :class:`PolicyAgent` with the training observation."""
        kwargs.setdefault("name", self.metadata["algo"])
        stored = self.metadata["policy_agent"]
        kwargs.setdefault("deterministic", stored.get("deterministic", True))
        return policy_agent(self.model, self.transform, stored["answer"], **kwargs)


def train(
    env_id: str = "TopK-v0",
    env_kwargs: Mapping[str, Any] | None = None,
    *,
    algo: str = "ppo",
    policy: str = "arm-set",
    total_timesteps: int = 200_000,
    num_envs: int = 8,
    seed: int = 0,
    obs_options: Mapping[str, Any] | None = None,
    algo_kwargs: Mapping[str, Any] | None = None,
    reward_scale: float = 10.0,
    eval_every: int | None = None,
    eval_episodes: int = 200,
    save_path: str | Path | None = None,
    keep_best: bool = False,
    max_seconds: float | None = None,
    max_cpu_seconds: float | None = None,
    sample: bool | None = None,
    progress_bar: bool = False,
    backend: str = "auto",
    torch_threads: int | None = 1,
    verbose: int = 0,
    log: Callable[[str], None] | None = print,
    callbacks: Sequence[BaseCallback] = (),
) -> TrainResult:
    """Train ``algo`` on a ``TopK`` family and (optionally) save it.

    Args:
        env_id: ``"TopK-v0"`` or ``"TopK-Batch-v0"`` (or a key of :data:`PRESETS`,
            whose kwargs are then updated by ``env_kwargs``).
        env_kwargs: ``gym.make`` kwargs of the family (``shuffle=True`` by default).
        algo: ``"ppo"``, ``"a2c"`` or ``"dqn"`` (``TopK-v0`` only).
        policy: ``"arm-set"`` (:class:`ArmSetPolicy`, PPO/A2C) or ``"mlp"`` (SB3's
            ``MlpPolicy``, 2 x 128; the only choice for DQN).
        total_timesteps: environment steps to train for (all envs together).
        num_envs: parallel environments.
        seed: seeds the model and the training envs (``seed + i``).
        obs_options: arguments of :class:`~bandit_envs.wrappers.FlatObservation`.
        algo_kwargs: constructor arguments of the SB3 algorithm (over our defaults).
        reward_scale: training rewards are multiplied by this.
        eval_every: evaluate every this many steps (and at the end) on
            ``eval_episodes`` validation seeds; ``None``: only at the end if
            ``eval_episodes > 0``.
        eval_episodes: validation episodes per evaluation (0: none).
        save_path: save the final model there (``.zip`` + ``.json`` sidecar).
        keep_best: also save the best evaluated model as ``<save_path>-best.zip``: the
            lowest validation regret in the mode it would play (see ``sample``).
        max_seconds: stop training after this wall-clock time.
        max_cpu_seconds: stop training after this much CPU time of this process
            (a budget that holds on a busy machine; evaluation is not counted).
        sample: how the saved policy plays: ``False`` SB3's most likely action,
            ``True`` seeded sampling (:class:`SampledPolicyAgent`), ``None``: both are
            evaluated and logged, and the final model samples only if its validation
            regret is lower than the deterministic one by more than the latter's 95%
            half-width (deterministic without evaluation or for DQN). A 100-episode
            validation cannot tell close modes apart; the rule keeps the default.
        progress_bar: show a tqdm progress bar.
        backend: vector env backend (see :func:`make_training_env`).
        torch_threads: ``torch.set_num_threads`` (``None``: leave as is).
        verbose: SB3 verbosity.
        log: where progress lines go (``None``: nowhere).
        callbacks: more stable-baselines3 callbacks (e.g. progress reporting).
    """
    if env_id in PRESETS:
        env_id, preset = PRESETS[env_id]
        env_kwargs = {**preset, **dict(env_kwargs or {})}
    algo = algo.lower()
    if algo not in ALGOS:
        raise ValueError(f"algo={algo!r} must be one of {sorted(ALGOS)}")
    if algo == "dqn" and not env_id.endswith("TopK-v0"):
        raise ValueError("DQN needs a Discrete action space: use env_id='TopK-v0'")
    if torch_threads is not None:
        torch.set_num_threads(torch_threads)
    say = log or (lambda _msg: None)
    kwargs = _training_kwargs(env_id, env_kwargs)
    probe = gym.make(env_id, **kwargs)
    transform = FlatObservation.from_env(probe, **dict(obs_options or {}))
    probe.close()
    venv, transform, backend_used = make_training_env(
        env_id,
        num_envs,
        seed=seed,
        env_kwargs=kwargs,
        transform=transform,
        backend=backend,
        reward_scale=reward_scale,
    )
    if policy not in ("arm-set", "mlp"):
        raise ValueError(f"policy={policy!r} must be 'arm-set' or 'mlp'")
    if policy == "arm-set" and algo == "dqn":
        raise ValueError(
            "policy='arm-set' is an actor-critic policy (PPO, A2C); use policy='mlp' for DQN"
        )
    params = {**_ALGO_DEFAULTS[algo], **dict(algo_kwargs or {})}
    if policy == "arm-set":
        policy_cls: Any = ArmSetPolicy
        params["policy_kwargs"] = {
            "n_arms": transform.n_arms,
            "arm_features": len(transform.features),
            **params.get("policy_kwargs", {}),
        }
    else:
        policy_cls = "MlpPolicy"
        params["policy_kwargs"] = {"net_arch": [128, 128], **params.get("policy_kwargs", {})}
    if algo == "ppo":
        # one update per n_steps * num_envs steps; keep the minibatch within it
        params["batch_size"] = min(params["batch_size"], params["n_steps"] * num_envs)
    model = ALGOS[algo](policy_cls, venv, seed=seed, device="cpu", verbose=verbose, **params)
    training_info = {
        "policy": policy,
        "algo_kwargs": params,
        "total_timesteps": total_timesteps,
        "num_envs": num_envs,
        "seed": seed,
        "train_env_seeds": f"{seed} ({backend_used}; first reset only, then each env's stream)",
        "reward_scale": reward_scale,
        "backend": backend_used,
    }
    metadata = policy_metadata(algo, env_id, kwargs, transform, training_info)
    eval_id, eval_kwargs = evaluation_env(env_id, kwargs)
    answer = metadata["policy_agent"]["answer"]
    save = Path(save_path) if save_path is not None else None
    best_path = (
        save.with_name(save.name.removesuffix(".zip") + "-best.zip") if save and keep_best else None
    )

    callbacks = list(callbacks)
    progress = _Progress(total_timesteps, f"{algo} {env_id}") if progress_bar else None
    if progress is not None:
        callbacks.append(progress)
    evaluator = None
    if eval_episodes > 0:
        if algo == "dqn" or sample is False:
            modes = ("deterministic",)
        else:
            modes = ("sampled",) if sample else ("deterministic", "sampled")
        evaluator = _PeriodicEval(
            eval_every or total_timesteps + 1,
            eval_episodes,
            eval_id,
            eval_kwargs,
            transform,
            answer,
            modes,
            say,
            progress,
            best_path,
            metadata,
        )
        callbacks.append(evaluator)
    if max_seconds is not None:
        callbacks.append(_TimeLimit(max_seconds))
    if max_cpu_seconds is not None:
        callbacks.append(
            _TimeLimit(
                max_cpu_seconds,
                cpu=True,
                exclude=(lambda: evaluator.cpu_spent) if evaluator else None,
            )
        )
    say(
        f"training {algo} on {env_id} {kwargs} with {num_envs} envs ({backend_used}), "
        f"{total_timesteps} steps" + (f", at most {max_seconds:.0f}s" if max_seconds else "")
    )
    start, cpu_start = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=total_timesteps, callback=CallbackList(callbacks))
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    if evaluator is not None:
        cpu_seconds -= evaluator.cpu_spent
    say(
        f"trained {model.num_timesteps} steps in {seconds:.1f}s wall, {cpu_seconds:.1f}s CPU w/o "
        f"evaluation ({model.num_timesteps / max(cpu_seconds, 1e-9):.0f} steps per CPU second)"
    )
    metadata["policy_agent"]["deterministic"] = not sample
    if evaluator is not None:
        final = evaluator.run()
        metadata["policy_agent"]["deterministic"] = _keep_deterministic(final)
        if len(evaluator.modes) > 1:
            mode = "deterministic" if metadata["policy_agent"]["deterministic"] else "sampled"
            say(f"the saved policy plays {mode} (sampled only if clearly better on validation)")
    venv.close()
    metadata["training"].update(
        timesteps=int(model.num_timesteps),
        seconds=round(seconds, 1),
        cpu_seconds=round(cpu_seconds, 1),
        evaluations=evaluator.history if evaluator else [],
    )
    path = None
    if save is not None:
        path = save_policy(model, save, metadata)
        say(f"saved {path} (+ {_sidecar(path).name})")
    return TrainResult(
        model,
        transform,
        metadata,
        path,
        best_path if best_path and best_path.exists() else None,
        evaluator.history if evaluator else [],
        int(model.num_timesteps),
        seconds,
    )


# ------------------------------------------------------------------ comparison, CLI
def compare(
    players: Mapping[str, Agent | Callable[[], Agent]] | Sequence[str],
    env_id: str,
    env_kwargs: Mapping[str, Any],
    episodes: int,
    *,
    seed0: int = TEST_SEED0,
    log: Callable[[str], None] | None = None,
) -> list[Summary]:
    """Every player on the same ``episodes`` held-out seeds ``seed0 + j`` of a training family.

    ``players`` maps a label to an agent (or a factory); a list of names is built with
    :func:`agents.make` (``"ppo:PATH"`` included). Episodes run on
    :func:`evaluation_env` of ``(env_id, env_kwargs)``.
    """
    from agents.registry import make

    if not isinstance(players, Mapping):
        players = {name: (lambda name=name: make(name)) for name in players}
    eid, ekw = evaluation_env(env_id, env_kwargs)
    seeds = range(seed0, seed0 + episodes)
    rows = []
    for label, player in players.items():
        start = time.perf_counter()
        rows.append(summarize(label, evaluate(player, eid, ekw, seeds)))
        if log is not None:
            log(f"{rows[-1].row()}  ({time.perf_counter() - start:.0f}s)")
    return rows


TABLE_HEADER = (
    "| agent | episodes | mean regret ± 95% CI | misidentification [95% CI] | pulls |\n"
    "| --- | --- | --- | --- | --- |"
)


def add_train_arguments(parser: Any) -> Any:
    """Add :func:`train`'s options to an ``argparse`` parser (``topk-bench train``, the example)."""
    parser.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="standard",
        help="instance family (env id and kwargs); --env overrides kwargs",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="env kwarg (VALUE parsed as JSON, else a string); repeatable",
    )
    parser.add_argument("--algo", choices=sorted(ALGOS), default="ppo")
    parser.add_argument(
        "--policy",
        choices=["arm-set", "mlp"],
        default=None,
        help="default: arm-set (PPO/A2C), mlp (DQN)",
    )
    parser.add_argument("--timesteps", type=int, default=20_000, help="training steps (all envs)")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--backend", choices=["auto", "native", "sync", "dummy"], default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--algo-kwargs",
        type=json.loads,
        default=None,
        metavar="JSON",
        help="SB3 constructor arguments, e.g. '{\"learning_rate\": 1e-3}'",
    )
    parser.add_argument(
        "--features",
        default=None,
        help="comma-separated FlatObservation features (default fraction,log_count,mean,pulled)",
    )
    parser.add_argument("--reward-scale", type=float, default=10.0)
    parser.add_argument(
        "--sample",
        choices=["auto", "yes", "no"],
        default="auto",
        help="play the saved policy by seeded sampling (yes), its most likely action (no), "
        "or whichever validates better (auto)",
    )
    parser.add_argument("--eval-every", type=int, default=None, help="steps between evaluations")
    parser.add_argument(
        "--eval-episodes", type=int, default=100, help="validation episodes per evaluation"
    )
    parser.add_argument("--max-seconds", type=float, default=None, help="wall-clock limit")
    parser.add_argument("--max-cpu-seconds", type=float, default=None, help="CPU-time limit")
    parser.add_argument("--out", default=None, help="save the model there (.zip and .json)")
    parser.add_argument(
        "--keep-best", action="store_true", help="also save the best evaluated model"
    )
    parser.add_argument("--progress", action="store_true", help="show a progress bar")
    return parser


def _parse_env(items: Iterable[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--env {item!r} must be KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def train_from_args(args: Any, log: Callable[[str], None] | None = print) -> TrainResult:
    """Run :func:`train` with the options of :func:`add_train_arguments`."""
    env_id, preset = PRESETS[args.preset]
    env_kwargs = {**preset, **_parse_env(args.env)}
    policy = args.policy or ("mlp" if args.algo == "dqn" else "arm-set")
    obs_options = {"features": args.features.split(",")} if args.features else None
    return train(
        env_id,
        env_kwargs,
        algo=args.algo,
        policy=policy,
        total_timesteps=args.timesteps,
        num_envs=args.num_envs,
        seed=args.seed,
        obs_options=obs_options,
        algo_kwargs=args.algo_kwargs,
        reward_scale=args.reward_scale,
        eval_every=args.eval_every,
        eval_episodes=args.eval_episodes,
        save_path=args.out,
        keep_best=args.keep_best,
        max_seconds=args.max_seconds,
        max_cpu_seconds=args.max_cpu_seconds,
        progress_bar=args.progress,
        sample={"auto": None, "yes": True, "no": False}[args.sample],
        backend=args.backend,
        log=log,
    )
