"""Training a stable-baselines3 policy on a ``TopK`` family: :func:`train`.

:func:`train` (with a :class:`TrainConfig`) is what ``examples/train_ppo.py`` and
``topk-bench train`` call
(:mod:`agents.learned.cli` gives a CLI the same options). It builds a vector
environment (:func:`~agents.learned.vec_env.make_training_env`), normalises the
observation with :class:`bandit_envs.wrappers.FlatObservation`, trains PPO, A2C or
sb3-contrib's MaskablePPO with :class:`~agents.learned.networks.ArmSetPolicy` (one
network shared by all arms; ``MaskableArmSetPolicy`` for MaskablePPO), DQN with SB3's
``MlpPolicy`` (only on a ``Discrete`` action space: ``TopK-v0``, or
``TopK-PullByPull-v0`` in project mode) or sb3-contrib's RecurrentPPO with its
``MlpLstmPolicy``, on the CPU, with an optional progress bar, wall-clock or CPU-time
limit and periodic evaluation (:mod:`agents.learned.callbacks`), and saves the model
with its metadata (:mod:`agents.learned.saving`).

Seeds: the training envs are reset once with ``seed`` (native vector env: one generator
for all envs; ``DummyVecEnv``/``SyncVectorEnv``: env ``i`` gets ``seed + i``) and then
continue their own streams; periodic evaluation uses the seeds
:data:`~agents.learned.evaluation.VALIDATION_SEED0` + ``j``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.logger import HumanOutputFormat, Logger
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

import bandit_envs  # noqa: F401  (registers the ids)
from agents.learned.adapter import PolicyAgent
from agents.learned.algos import (
    ALGO_DEFAULTS,
    ALGO_NAMES,
    ALGOS,
    DEFAULT_POLICY,
    DISCRETE_ONLY,
    MASKABLE,
    RECURRENT,
)
from agents.learned.callbacks import (
    PeriodicEval,
    Progress,
    TimeLimit,
    VecValidation,
    keep_deterministic,
)
from agents.learned.families import PRESETS, PULL_BY_PULL_ID, evaluation_env, training_kwargs
from agents.learned.imitation import ImitationSettings
from agents.learned.imitation import imitate as imitate_teacher
from agents.learned.metadata import jsonable, policy_metadata, sidecar_path
from agents.learned.networks import ArmSetPolicy
from agents.learned.saving import best_checkpoint_path, policy_agent, save_policy
from agents.learned.vec_env import VecFlatObservation, make_training_env
from bandit_envs.wrappers import FlatObservation

__all__ = ["TrainConfig", "TrainResult", "train"]


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
        if stored.get("prior") is not None:
            kwargs.setdefault("prior", stored["prior"])
        return policy_agent(self.model, self.transform, stored["answer"], **kwargs)


@dataclass(frozen=True)
class TrainConfig:
    """What :func:`train` trains, for how long, how it is evaluated and where it is saved.

    Attributes:
        env_id: ``"TopK-v0"``, ``"TopK-Batch-v0"`` or ``"TopK-PullByPull-v0"`` (or a
            key of :data:`PRESETS`, whose kwargs are then updated by ``env_kwargs``).
        env_kwargs: ``gym.make`` kwargs of the family (``shuffle=True`` by default).
        algo: ``"ppo"``, ``"a2c"``, ``"dqn"`` (a ``Discrete`` action space),
            ``"recurrent_ppo"`` or ``"maskable_ppo"`` (sb3-contrib; the only algorithm
            for ``TopK-PullByPull-v0`` in raise mode, its default).
        policy: ``"arm-set"`` (:class:`ArmSetPolicy`: PPO, A2C, MaskablePPO) or
            ``"mlp"`` (SB3's ``MlpPolicy``, 2 x 128, the only choice for DQN;
            RecurrentPPO's ``MlpLstmPolicy``, its only choice); ``None``: the
            algorithm's default (:data:`~agents.learned.algos.DEFAULT_POLICY`).
        total_timesteps: environment steps to train for (all envs together).
        num_envs: parallel environments.
        seed: seeds the model and the training envs (``seed + i``).
        obs_options: arguments of :class:`~bandit_envs.wrappers.FlatObservation`.
        algo_kwargs: constructor arguments of the SB3 algorithm (over our defaults).
        reward_scale: training rewards are multiplied by this.
        prior: ``(a, b)``: the family's means are drawn from Beta(a, b) (Bernoulli
            arms) and the policy may know it: the observation transform gets the prior
            (for its ``post_*`` features) and the policy answers with the posterior
            top k (``PolicyAgent(answer="posterior")``).
        reward: ``"env"`` (the environment's terminal reward) or ``"posterior"``
            (:class:`~agents.learned.vec_env.VecPosteriorReward`: the change of the
            posterior top-k value at every step; needs ``prior``).
        imitate: DAgger settings (:class:`~agents.learned.imitation.ImitationSettings`:
            ``teacher``, ``iterations``, ``episodes``, ``epochs``, ``batch_size``,
            ``learning_rate``): fit the policy to a prior-aware teacher before PPO
            (:func:`~agents.learned.imitation.imitate`; needs ``prior`` and ``TopK-v0``);
            ``total_timesteps=0`` then skips PPO.
        eval_every: evaluate every this many steps (and at the end) on
            ``eval_episodes`` validation seeds; ``None``: only at the end if
            ``eval_episodes > 0``.
        eval_episodes: validation episodes per evaluation (0: none).
        validation: how validation episodes are played: ``"agent"`` one at a time
            through ``PolicyAgent`` on the benchmark form of the family
            (:class:`~agents.learned.callbacks.PeriodicEval`), or ``"vector"`` all at
            once on a vector env of the training form
            (:class:`~agents.learned.callbacks.VecValidation`: tens of times faster;
            it logs the task's score too, and chooses the play mode and the best
            checkpoint by it).
        save_path: save the final model there (``.zip`` + ``.json`` sidecar).
        keep_best: also save the best evaluated model as ``<save_path>-best.zip``: the
            lowest validation regret in the mode it would play (see ``sample``).
        max_seconds: stop training after this wall-clock time.
        max_cpu_seconds: stop training after this much CPU time of this process
            (a budget that holds on a shared machine; evaluation is not counted).
        sample: how the saved policy plays: ``False`` SB3's most likely action,
            ``True`` seeded sampling (``SampledPolicyAgent``), ``None``: both are
            evaluated and logged, and the final model samples only if its validation
            regret is lower than the deterministic one by more than the latter's 95%
            half-width (deterministic without evaluation or for DQN). A 100-episode
            validation cannot tell close modes apart; the rule keeps the default.
        progress_bar: show a tqdm progress bar.
        backend: vector env backend (see :func:`~agents.learned.vec_env.make_training_env`).
        torch_threads: ``torch.set_num_threads`` (``None``: leave as is).
        verbose: SB3 verbosity.

    A bad value is a ``ValueError`` naming it, raised when the config is built.
    :meth:`from_mapping` builds one from a dict (a ``[[train]]`` table, CLI options).
    """

    env_id: str = "TopK-v0"
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    algo: str = "ppo"
    policy: str | None = None
    total_timesteps: int = 200_000
    num_envs: int = 8
    seed: int = 0
    obs_options: Mapping[str, Any] | None = None
    algo_kwargs: Mapping[str, Any] | None = None
    reward_scale: float = 10.0
    prior: tuple[float, float] | None = None
    reward: str = "env"
    imitate: Mapping[str, Any] | None = None
    eval_every: int | None = None
    eval_episodes: int = 200
    validation: str = "agent"
    save_path: str | Path | None = None
    keep_best: bool = False
    max_seconds: float | None = None
    max_cpu_seconds: float | None = None
    sample: bool | None = None
    progress_bar: bool = False
    backend: str = "auto"
    torch_threads: int | None = 1
    verbose: int = 0

    def __post_init__(self) -> None:
        if self.env_id in PRESETS:  # a preset: its env id, its kwargs under ours
            env_id, preset = PRESETS[self.env_id]
            object.__setattr__(self, "env_id", env_id)
            object.__setattr__(self, "env_kwargs", {**preset, **dict(self.env_kwargs or {})})
        object.__setattr__(self, "algo", self.algo.lower())
        if self.algo not in ALGO_NAMES:
            raise ValueError(f"algo={self.algo!r} must be one of {sorted(ALGO_NAMES)}")
        if self.algo not in ALGOS:  # pragma: no cover - depends on the install
            raise ValueError(
                f"algo={self.algo!r} needs sb3-contrib: pip install 'topk-bandit-envs[rl]'"
            )
        pull_by_pull = self.env_id.endswith(PULL_BY_PULL_ID)
        if self.algo in DISCRETE_ONLY and not (self.env_id.endswith("TopK-v0") or pull_by_pull):
            raise ValueError(
                f"{self.algo.upper()} needs a Discrete action space: use env_id='TopK-v0' "
                f"or {PULL_BY_PULL_ID!r}"
            )
        if pull_by_pull and self.algo not in MASKABLE:
            mode = dict(self.env_kwargs or {}).get("invalid_action", "raise")
            if mode != "project":
                raise ValueError(
                    f"{PULL_BY_PULL_ID} with invalid_action={mode!r} needs a masked policy "
                    f"(algo='maskable_ppo'); {self.algo} trains with invalid_action='project'"
                )
        if self.policy is None:
            object.__setattr__(self, "policy", DEFAULT_POLICY[self.algo])
        if self.policy not in ("arm-set", "mlp"):
            raise ValueError(f"policy={self.policy!r} must be 'arm-set' or 'mlp'")
        if self.policy == "arm-set" and self.algo in DISCRETE_ONLY | RECURRENT:
            raise ValueError(
                "policy='arm-set' is a feed-forward actor-critic policy (PPO, A2C, "
                f"MaskablePPO); use policy='mlp' for {self.algo}"
            )
        if self.validation not in ("agent", "vector"):
            raise ValueError(f"validation={self.validation!r} must be 'agent' or 'vector'")
        if self.reward not in ("env", "posterior"):
            raise ValueError(f"reward={self.reward!r} must be 'env' or 'posterior'")
        if self.reward == "posterior" and self.prior is None:
            raise ValueError("reward='posterior' needs prior=(a, b)")
        if self.imitate is not None and (self.prior is None or not self.env_id.endswith("TopK-v0")):
            raise ValueError("imitate= needs prior=(a, b) and a one-pull family (TopK-v0)")
        if self.prior is not None:
            object.__setattr__(self, "prior", tuple(float(v) for v in self.prior))
        for name in ("total_timesteps", "eval_episodes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name}={value!r} must be an integer >= 0")
        if (
            isinstance(self.num_envs, bool)
            or not isinstance(self.num_envs, int)
            or self.num_envs < 1
        ):
            raise ValueError(f"num_envs={self.num_envs!r} must be an integer >= 1")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> TrainConfig:
        """A config from a dict of its fields; an unknown key is a ``ValueError`` naming it."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown training options {unknown} (known: {sorted(known)})")
        return cls(**dict(values))


def train(
    config: TrainConfig,
    *,
    log: Callable[[str], None] | None = print,
    callbacks: Sequence[BaseCallback] = (),
) -> TrainResult:
    """Train ``config.algo`` on ``config``'s family and (optionally) save it.

    Args:
        config: what to train (:class:`TrainConfig`).
        log: where progress lines go (``None``: nowhere).
        callbacks: more stable-baselines3 callbacks (e.g. progress reporting).
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"train() takes a TrainConfig, not {type(config).__name__}")
    if config.torch_threads is not None:
        torch.set_num_threads(config.torch_threads)
    say = log or (lambda _msg: None)
    kwargs, transform, venv, backend_used = _training_env(config)
    model, params = _model(config, venv, transform)
    training_info = {
        "policy": config.policy,
        "algo_kwargs": params,
        "total_timesteps": config.total_timesteps,
        "num_envs": config.num_envs,
        "seed": config.seed,
        "train_env_seeds": (
            f"{config.seed} ({backend_used}; first reset only, then each env's stream)"
        ),
        "reward_scale": config.reward_scale,
        "reward": config.reward,
        "backend": backend_used,
    }
    metadata = policy_metadata(config.algo, config.env_id, kwargs, transform, training_info)
    agent_kwargs: dict[str, Any] = {}
    if config.prior is not None:
        metadata["policy_agent"].update(answer="posterior", prior=list(transform.prior or ()))
        agent_kwargs["prior"] = metadata["policy_agent"]["prior"]
    save = Path(config.save_path) if config.save_path is not None else None
    best_path = best_checkpoint_path(save) if save and config.keep_best else None
    progress = (
        Progress(config.total_timesteps, f"{config.algo} {config.env_id}")
        if config.progress_bar
        else None
    )
    evaluator = _evaluator(
        config, kwargs, transform, metadata, agent_kwargs, best_path, say, progress
    )
    say(
        f"training {config.algo} on {config.env_id} {kwargs} with {config.num_envs} envs "
        f"({backend_used}), {config.total_timesteps} steps"
        + (f", at most {config.max_seconds:.0f}s" if config.max_seconds else "")
    )
    start, cpu_start = time.perf_counter(), time.process_time()
    if config.imitate is not None:
        dagger = ImitationSettings.from_mapping(config.imitate)
        training_info["imitation"] = {
            **asdict(dagger),
            "history": imitate_teacher(
                model,
                _dict_level(venv),
                transform,
                dagger,
                budget=int(kwargs["budget"]),
                seed=config.seed,
                log=say,
            ),
        }
        metadata["training"] = jsonable(training_info)
    if config.total_timesteps > 0:
        hooks = _callbacks(config, list(callbacks), progress, evaluator)
        model.learn(total_timesteps=config.total_timesteps, callback=CallbackList(hooks))
    elif evaluator is not None:
        evaluator.init_callback(model)  # learn() would have done it
        evaluator.start = start
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    if evaluator is not None:
        cpu_seconds -= evaluator.cpu_spent
    say(
        f"trained {model.num_timesteps} steps in {seconds:.1f}s wall, {cpu_seconds:.1f}s CPU w/o "
        f"evaluation ({model.num_timesteps / max(cpu_seconds, 1e-9):.0f} steps per CPU second)"
    )
    metadata["policy_agent"]["deterministic"] = not config.sample
    if evaluator is not None:
        done = evaluator.history and evaluator.history[-1]["timesteps"] == model.num_timesteps
        final = evaluator.history[-1] if done else evaluator.run()
        metadata["policy_agent"]["deterministic"] = keep_deterministic(final)
        if len(evaluator.modes) > 1:
            mode = "deterministic" if metadata["policy_agent"]["deterministic"] else "sampled"
            say(f"the saved policy plays {mode} (sampled only if clearly better on validation)")
        evaluator.close()
    venv.close()
    metadata["training"].update(
        timesteps=int(model.num_timesteps),
        seconds=round(seconds, 1),
        cpu_seconds=round(cpu_seconds, 1),
        evaluations=evaluator.history if evaluator else [],
    )
    if evaluator is not None:  # the validations' CPU time, the final one included
        metadata["training"]["validation_cpu_seconds"] = round(evaluator.cpu_spent, 4)
    path = None
    if save is not None:
        path = save_policy(model, save, metadata)
        say(f"saved {path} (+ {sidecar_path(path).name})")
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


def _training_env(config: TrainConfig) -> tuple[dict[str, Any], FlatObservation, VecEnv, str]:
    """The family's checked kwargs, the observation transform and the training vector env."""
    kwargs = training_kwargs(config.env_id, config.env_kwargs)
    options = dict(config.obs_options or {})
    if config.prior is not None:
        given = options.setdefault("prior", config.prior)
        if [float(v) for v in given] != [float(v) for v in config.prior]:
            raise ValueError(f"obs_options prior={given!r} is not prior={config.prior!r}")
    probe = gym.make(config.env_id, **kwargs)
    transform = FlatObservation.from_env(probe, **options)
    probe.close()
    venv, transform, backend_used = make_training_env(
        config.env_id,
        config.num_envs,
        seed=config.seed,
        env_kwargs=kwargs,
        transform=transform,
        backend=config.backend,
        reward_scale=config.reward_scale,
        reward=config.reward,
    )
    return kwargs, transform, venv, backend_used


def _model(
    config: TrainConfig, venv: VecEnv, transform: FlatObservation
) -> tuple[BaseAlgorithm, dict[str, Any]]:
    """The SB3 model (on the CPU) and the constructor arguments it was built with."""
    params = {**ALGO_DEFAULTS[config.algo], **dict(config.algo_kwargs or {})}
    if config.policy == "arm-set":
        policy_cls: Any = ArmSetPolicy
        if config.algo in MASKABLE:
            from agents.learned.networks import MaskableArmSetPolicy

            policy_cls = MaskableArmSetPolicy
        params["policy_kwargs"] = {
            "n_arms": transform.n_arms,
            "arm_features": len(transform.features),
            **params.get("policy_kwargs", {}),
        }
    else:
        policy_cls = "MlpLstmPolicy" if config.algo in RECURRENT else "MlpPolicy"
        params["policy_kwargs"] = {"net_arch": [128, 128], **params.get("policy_kwargs", {})}
    if "n_steps" in params and "batch_size" in params:  # the PPO family
        # one update per n_steps * num_envs steps; keep the minibatch within it
        params["batch_size"] = min(params["batch_size"], params["n_steps"] * config.num_envs)
    model = ALGOS[config.algo](
        policy_cls, venv, seed=config.seed, device="cpu", verbose=config.verbose, **params
    )
    model.set_logger(_logger(config.verbose))
    return model, params


def _logger(verbose: int) -> Logger:
    """The SB3 logger of a training: its console lines at ``verbose >= 1``, no files.

    The logger ``learn`` builds by default writes no files either, but first creates an
    empty ``SB3-<date>`` directory in the temporary directory (``$SB3_LOGDIR`` unset), one
    per training.
    """
    return Logger(
        folder=None, output_formats=[HumanOutputFormat(sys.stdout)] if verbose >= 1 else []
    )


def _evaluator(
    config: TrainConfig,
    kwargs: dict[str, Any],
    transform: FlatObservation,
    metadata: dict[str, Any],
    agent_kwargs: dict[str, Any],
    best_path: Path | None,
    say: Callable[[str], None],
    progress: Progress | None,
) -> PeriodicEval | None:
    """Periodic validation on the family's evaluation env (``None`` without episodes)."""
    if config.eval_episodes <= 0:
        return None
    if config.algo in DISCRETE_ONLY or config.sample is False:
        modes: tuple[str, ...] = ("deterministic",)
    else:
        modes = ("sampled",) if config.sample else ("deterministic", "sampled")
    if config.validation == "vector":
        evaluator_cls: type[PeriodicEval] = VecValidation
        eval_id, eval_kwargs = config.env_id, kwargs
    else:
        evaluator_cls = PeriodicEval
        eval_id, eval_kwargs = evaluation_env(config.env_id, kwargs)
    return evaluator_cls(
        config.eval_every or config.total_timesteps + 1,
        config.eval_episodes,
        eval_id,
        eval_kwargs,
        transform,
        metadata["policy_agent"]["answer"],
        modes,
        say,
        progress,
        best_path,
        metadata,
        agent_kwargs,
    )


def _callbacks(
    config: TrainConfig,
    extra: list[BaseCallback],
    progress: Progress | None,
    evaluator: PeriodicEval | None,
) -> list[BaseCallback]:
    """The callbacks of ``model.learn``: ``extra``, progress, validation, time limits."""
    out: list[BaseCallback] = extra + [c for c in (progress, evaluator) if c is not None]
    if config.max_seconds is not None:
        out.append(TimeLimit(config.max_seconds))
    if config.max_cpu_seconds is not None:
        out.append(
            TimeLimit(
                config.max_cpu_seconds,
                cpu=True,
                exclude=(lambda: evaluator.cpu_spent) if evaluator else None,
            )
        )
    return out


def _dict_level(venv: VecEnv) -> VecEnv:
    """The vector env below the flattening (``Dict`` observations)."""
    while isinstance(venv, VecEnvWrapper):
        if isinstance(venv, VecFlatObservation):
            return venv.venv
        venv = venv.venv
    raise ValueError("the training env has no VecFlatObservation layer")
