"""PPO and A2C on the fast path: :func:`fast_train` with a :class:`FastConfig`.

What makes it fast, each choice measured by ``benchmarks/rl_throughput.py``:

* the network (:class:`~agents.learned.fast.network.FastArmSetNet`) is
  ``ArmSetPolicy``'s function in its split form, 32 units wide by default, one torch
  thread;
* the envs are a native vector env of ``num_envs`` episodes (1,024 by default), with
  no per-env Python object (:class:`~agents.learned.fast.rollout.Rollouts`);
* each update trains on a random ``update_fraction`` of the rollout's transitions per
  epoch (a quarter by default). Successive steps of a bandit episode carry nearly the
  same information about the episode's return (a terminal reward), so a subsample
  of the steps estimates the policy gradient nearly as well as all of them, at a
  fraction of the network's backward passes, which are what limits the rate.

PPO is Schulman et al. (2017): clipped ratio, GAE (Schulman et al. 2016), value loss,
entropy bonus, Adam, global gradient-norm clipping. A2C (Mnih et al. 2016) is one
full-batch policy-gradient step per rollout on the same advantages (no ratio, no
clipping), with Adam. The trained network is exported to stable-baselines3's PPO or
A2C with :class:`~agents.learned.networks.ArmSetPolicy` and saved with its metadata
(:func:`~agents.learned.saving.save_policy`), so ``agents.make("ppo:PATH")``,
``topk-bench run`` configs and ``compare`` play it like any trained model.

``FastConfig(recurrent=True)`` trains the network with a GRU memory across an
episode's steps (the RL^2 setting, Duan et al. 2016), for the ablation "recurrent
against feed-forward": each rollout stores the envs' states at its start and the
episode starts of its steps, and the update re-runs each sampled env's ``n_steps``
steps from its stored state (truncated backprop through time over the rollout),
sampling whole env sequences. It is for measurement: a recurrent network has no
stable-baselines3 counterpart, so it is neither exported nor saved
(``FastResult.model`` is ``None``; :class:`~agents.learned.fast.agent.NetAgent` plays
its network in the agent protocol).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from agents.learned.algos import ALGOS
from agents.learned.callbacks import keep_deterministic
from agents.learned.evaluation import VALIDATION_SEED0
from agents.learned.families import PRESETS, family_prior, score_name, training_kwargs
from agents.learned.fast.network import FastArmSetNet
from agents.learned.fast.rollout import ActionLaw, Rollouts, play_scores
from agents.learned.metadata import jsonable, policy_metadata, sidecar_path
from agents.learned.networks import ArmSetPolicy
from agents.learned.saving import best_checkpoint_path, policy_agent, save_policy
from agents.learned.vec_env import make_training_env
from bandit_envs.wrappers import FlatObservation

__all__ = ["FAST_ALGOS", "FastConfig", "FastResult", "fast_train"]

#: The algorithms of the fast path.
FAST_ALGOS = ("ppo", "a2c")


@dataclass(frozen=True)
class FastConfig:
    """What :func:`fast_train` trains, how, for how long and where it is saved.

    Attributes:
        env_id: ``"TopK-v0"`` or ``"TopK-Batch-v0"``, or a key of
            :data:`~agents.learned.families.PRESETS` (``env_kwargs`` then update its kwargs).
        env_kwargs: ``gym.make`` kwargs of the family.
        algo: ``"ppo"`` or ``"a2c"``.
        total_timesteps: environment steps (all envs together).
        num_envs: episodes stepped together.
        n_steps: steps per env per update.
        seed: seeds the network, the sampling and the training envs.
        hidden, layers, shared: the network (:class:`FastArmSetNet`).
        learning_rate: Adam's step size (at the start).
        lr_schedule: ``"constant"`` or ``"linear"``: decays to 0 at ``total_timesteps``
            (in steps, so a run stopped by ``max_cpu_seconds`` ends above 0).
        epochs: PPO passes over the rollout per update (A2C: one step).
        update_fraction: share of the rollout's transitions each pass trains on
            (recurrent: the share of its envs, whose whole ``n_steps`` sequences it
            trains on).
        minibatch_size: transitions per PPO gradient step (recurrent:
            ``minibatch_size // n_steps`` env sequences, at least one).
        gamma, gae_lambda: discount and GAE parameter (``None``: 0.9 and 0.8 with the
            posterior reward, whose terms are the value each step adds, so a short
            horizon credits a step with its own consequences; 1.0 and 0.95 with the
            env's terminal reward, which a discount would shrink to nothing).
        clip_range: PPO's ratio clip.
        normalize_advantage: standardise each update's advantages (mean 0, std 1), as
            stable-baselines3's PPO does by default; ``False`` keeps them in reward units
            (times ``reward_scale``).
        ent_coef, vf_coef: entropy bonus and value-loss weights.
        max_grad_norm: global gradient-norm clip.
        reward_scale: training rewards are multiplied by this.
        reward: ``"env"`` (the env's reward), ``"posterior"`` (the change of the
            posterior top-k value at every step; needs ``prior``) or ``"auto"``:
            posterior when the policy knows a prior and the family scores the
            aggregate regret, else env.
        prior: ``(a, b)``: the family's Beta prior, known to the policy (its
            observation gets the ``post_*`` features unless ``features`` says
            otherwise; it answers with the posterior top k); ``"auto"``: the
            family's own (:func:`~agents.learned.families.family_prior`: a
            ``beta-random`` family of Bernoulli arms), ``None``: no prior.
        features: the observation's per-arm features (``None``: ``FlatObservation``'s
            defaults, plus ``post_gap`` and ``post_std`` with a prior).
        eval_every: validate every this many steps (and at the end).
        eval_episodes: validation episodes (0: none).
        keep_best: also keep the validated checkpoint with the lowest score in the mode
            it would play (``FastResult.best``; with ``save_path`` saved as
            ``<save_path>-best.zip``, its sidecar's ``training.best_at`` naming the
            evaluation). The validation episodes are disjoint from every benchmark's,
            so choosing on them does not bias a benchmark. Needs ``eval_episodes > 0``.
        max_cpu_seconds: stop after this much CPU time of this process (validation
            not counted).
        max_seconds: stop after this wall-clock time.
        compile: run the rollouts' forward passes through ``torch.compile`` (3x faster
            at 4,096 envs; about 30 s to compile, counted in the CPU budget; needs a C++
            compiler). The updates run eagerly either way.
        recurrent: a GRU memory across an episode's steps
            (:class:`~agents.learned.fast.network.FastArmSetNet`), trained by truncated
            backprop through time over each rollout's ``n_steps`` steps. For
            measurement only: not exported, ``save_path`` refused, ``FastResult.model``
            is ``None``.
        save_path: save the final model there (``.zip`` + ``.json`` sidecar).
        progress_bar: show a tqdm progress bar.
    """

    env_id: str = "TopK-v0"
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    algo: str = "ppo"
    total_timesteps: int = 20_000_000
    num_envs: int = 4096
    n_steps: int = 16
    seed: int = 0
    hidden: int = 32
    layers: int = 2
    shared: bool = True
    learning_rate: float = 1e-3
    lr_schedule: str = "constant"
    epochs: int = 2
    update_fraction: float = 0.125
    minibatch_size: int = 4096
    gamma: float | None = None
    gae_lambda: float | None = None
    clip_range: float = 0.2
    normalize_advantage: bool = True
    ent_coef: float = 0.003
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    reward_scale: float = 10.0
    reward: str = "auto"
    prior: tuple[float, float] | str | None = "auto"
    features: tuple[str, ...] | None = None
    eval_every: int | None = None
    eval_episodes: int = 1000
    keep_best: bool = False
    max_cpu_seconds: float | None = None
    max_seconds: float | None = None
    compile: bool = True
    recurrent: bool = False
    save_path: str | Path | None = None
    progress_bar: bool = False

    def __post_init__(self) -> None:
        if self.env_id in PRESETS:
            env_id, preset = PRESETS[self.env_id]
            object.__setattr__(self, "env_id", env_id)
            object.__setattr__(self, "env_kwargs", {**preset, **dict(self.env_kwargs or {})})
        if self.env_id not in ("TopK-v0", "TopK-Batch-v0"):
            raise ValueError(
                f"env_id={self.env_id!r}: the fast path trains on 'TopK-v0' or "
                "'TopK-Batch-v0' (a '-pbp' preset needs action masks: use MaskablePPO)"
            )
        if self.algo not in FAST_ALGOS:
            raise ValueError(f"algo={self.algo!r} must be one of {FAST_ALGOS} on the fast path")
        if self.lr_schedule not in ("constant", "linear"):
            raise ValueError(f"lr_schedule={self.lr_schedule!r} must be 'constant' or 'linear'")
        if not isinstance(self.normalize_advantage, bool):
            raise ValueError(f"normalize_advantage={self.normalize_advantage!r} must be a bool")
        for name in ("total_timesteps", "num_envs", "n_steps", "hidden", "layers", "epochs"):
            value = getattr(self, name)
            low = 0 if name == "total_timesteps" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name}={value!r} must be an integer >= {low}")
        if not isinstance(self.keep_best, bool):
            raise ValueError(f"keep_best={self.keep_best!r} must be True or False")
        if self.keep_best and self.eval_episodes <= 0:
            raise ValueError(
                f"keep_best=True with eval_episodes={self.eval_episodes}: choosing a "
                "checkpoint needs validation episodes (eval_episodes > 0)"
            )
        if not isinstance(self.recurrent, bool):
            raise ValueError(f"recurrent={self.recurrent!r} must be True or False")
        if self.recurrent and self.save_path is not None:
            raise ValueError(
                f"recurrent=True with save_path={str(self.save_path)!r}: the recurrent "
                "variant is for measurement and is not saved; saved models are "
                "feed-forward (stable-baselines3's ArmSetPolicy has no memory to carry). "
                "Drop save_path, or train with recurrent=False"
            )
        if not 0 < self.update_fraction <= 1:
            raise ValueError(f"update_fraction={self.update_fraction!r} must be in (0, 1]")
        if isinstance(self.prior, str):
            if self.prior != "auto":
                raise ValueError(f"prior={self.prior!r} must be (a, b), 'auto' or None")
            object.__setattr__(self, "prior", family_prior(self.env_kwargs))
        if self.reward == "auto":
            regret = score_name(self.env_kwargs) == "aggregate_regret"
            object.__setattr__(
                self, "reward", "posterior" if self.prior is not None and regret else "env"
            )
        if self.reward not in ("env", "posterior"):
            raise ValueError(f"reward={self.reward!r} must be 'env', 'posterior' or 'auto'")
        if self.reward == "posterior" and self.prior is None:
            raise ValueError("reward='posterior' needs prior=(a, b)")
        if self.reward == "posterior" and score_name(self.env_kwargs) != "aggregate_regret":
            raise ValueError(
                f"reward='posterior' shapes the aggregate regret of a fixed budget; this "
                f"family scores {score_name(self.env_kwargs)!r}: use reward='env'"
            )
        if self.prior is not None:
            object.__setattr__(self, "prior", tuple(float(v) for v in self.prior))
        posterior = self.reward == "posterior"
        if self.gamma is None:
            object.__setattr__(self, "gamma", 0.9 if posterior else 1.0)
        if self.gae_lambda is None:
            object.__setattr__(self, "gae_lambda", 0.8 if posterior else 0.95)
        for name in ("gamma", "gae_lambda"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ValueError(f"{name}={value!r} must be in [0, 1]")
        if self.features is not None:
            object.__setattr__(self, "features", tuple(self.features))
        for name in ("learning_rate", "reward_scale", "minibatch_size"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name}={value!r} must be a finite number > 0")


@dataclass
class FastResult:
    """What :func:`fast_train` returns.

    ``model``: the stable-baselines3 model holding the trained weights; ``None`` for a
    recurrent network (``FastConfig(recurrent=True)``), which has none. ``best``: with
    ``FastConfig(keep_best=True)``, the best validated checkpoint as a result of its own
    (its metadata's ``training.best_at`` is the evaluation that chose it), else ``None``.
    """

    net: FastArmSetNet
    transform: FlatObservation
    metadata: dict[str, Any]
    model: Any
    path: Path | None = None
    curve: list[dict[str, Any]] = field(default_factory=list)
    best: FastResult | None = None

    def agent(self, **kwargs: Any) -> Any:
        """The trained policy as a :class:`~agents.learned.adapter.PolicyAgent`.

        A recurrent network has no model to play: a ``ValueError``.
        """
        if self.model is None:
            raise ValueError(
                "FastResult.agent(): this recurrent network (FastConfig(recurrent=True)) "
                "has no stable-baselines3 model (FastResult.model is None); play its "
                "network with agents.learned.fast.agent.NetAgent.from_result(result)"
            )
        stored = self.metadata["policy_agent"]
        kwargs.setdefault("name", self.metadata["algo"])
        if stored.get("prior") is not None:
            kwargs.setdefault("prior", stored["prior"])
        return policy_agent(self.model, self.transform, stored["answer"], **kwargs)


def _transform(config: FastConfig, kwargs: Mapping[str, Any]) -> FlatObservation:
    options: dict[str, Any] = {}
    if config.prior is not None:
        options["prior"] = config.prior
        options["features"] = config.features or (
            "fraction",
            "log_count",
            "mean",
            "pulled",
            "post_gap",
            "post_std",
        )
    elif config.features is not None:
        options["features"] = config.features
    probe = gym.make(config.env_id, **kwargs)
    try:
        return FlatObservation.from_env(probe, **options)
    finally:
        probe.close()


def _network(config: FastConfig, transform: FlatObservation, kwargs: Mapping[str, Any]) -> Any:
    n = transform.n_arms
    n_global = transform.observation_space.shape[0] - n * len(transform.features)
    if config.env_id == "TopK-v0":
        # Discrete(n + 1): the pooled stop logit, offered in fixed confidence only (in
        # fixed budget stopping early only gives up pulls; the export pins it to -1e4)
        per_arm, stop = 1, kwargs.get("setting", "fixed_budget") == "fixed_confidence"
    else:
        per_arm, stop = int(kwargs.get("repeat_limit") or kwargs["batch_size"]) + 1, False
    net = FastArmSetNet(
        n,
        len(transform.features),
        n_global,
        per_arm,
        stop,
        config.hidden,
        config.layers,
        config.shared,
        config.recurrent,
    )
    return net, ActionLaw(n, per_arm, stop)


def episode_horizon(kwargs: Mapping[str, Any]) -> int:
    """Steps of a full-length episode: the batch count, else the budget in batches."""
    if kwargs.get("max_batches"):
        return int(kwargs["max_batches"])
    return int(math.ceil(int(kwargs["budget"]) / int(kwargs.get("batch_size") or 1)))


def _update(
    net: FastArmSetNet,
    law: ActionLaw,
    optimizer: torch.optim.Optimizer,
    rollout: Any,
    config: FastConfig,
    generator: torch.Generator,
) -> dict[str, float]:
    """One PPO (or A2C) update on a rollout; returns the last minibatch's losses.

    Also ``first_logp_error``: the largest ``|log pi(a) - log pi_old(a)|`` of the first
    minibatch, before any gradient step (the rollout's own policy re-run: 0 up to float
    rounding, a PPO ratio of 1). A recurrent network trains on whole env sequences: a
    share ``update_fraction`` of the envs, each re-run over the rollout's ``n_steps``
    steps from its stored start state (truncated backprop through time).
    """
    adv = rollout.advantages.flatten()
    if config.normalize_advantage:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    returns = rollout.returns.flatten()
    old_logp = rollout.log_probs.flatten()
    ppo = config.algo == "ppo"
    steps, envs = rollout.log_probs.shape
    if net.recurrent:  # units: env sequences of `steps` transitions
        total = envs
        used = max(1, int(round(total * config.update_fraction)))
        size = min(max(1, int(config.minibatch_size) // steps), used) if ppo else used
        adv, returns, old_logp = (x.reshape(steps, envs) for x in (adv, returns, old_logp))
    else:  # units: transitions
        obs = rollout.obs.flatten(0, 1)
        actions = rollout.actions.flatten(0, 1)
        total = obs.shape[0]
        used = max(1, int(round(total * config.update_fraction)))
        size = min(config.minibatch_size, used) if ppo else used
    stats: dict[str, float] = {}
    for _ in range(config.epochs if ppo else 1):
        order = torch.randperm(total, generator=generator)[:used]
        for start in range(0, used, size):
            idx = order[start : start + size]
            if net.recurrent:
                logits, value, _ = net.unroll(
                    rollout.obs[:, idx], rollout.state0[idx], rollout.starts[:, idx]
                )
                logp, entropy = law.log_prob_entropy(logits, rollout.actions[:, idx].flatten(0, 1))
                old, a, ret = (x[:, idx].flatten() for x in (old_logp, adv, returns))
            else:
                logits, value = net(obs[idx])
                logp, entropy = law.log_prob_entropy(logits, actions[idx])
                old, a, ret = old_logp[idx], adv[idx], returns[idx]
            if "first_logp_error" not in stats:
                stats["first_logp_error"] = (logp - old).abs().max().item()
            if ppo:
                ratio = torch.exp(logp - old)
                policy_loss = -torch.min(
                    ratio * a, ratio.clamp(1 - config.clip_range, 1 + config.clip_range) * a
                ).mean()
            else:
                policy_loss = -(logp * a).mean()
            value_loss = (value - ret).pow(2).mean()
            loss = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy.mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
            optimizer.step()
            stats.update(
                policy_loss=policy_loss.item(),
                value_loss=value_loss.item(),
                entropy=entropy.mean().item(),
            )
    return stats


def to_sb3(
    result_net: FastArmSetNet,
    config: FastConfig,
    kwargs: Mapping[str, Any],
    transform: FlatObservation,
) -> Any:
    """A stable-baselines3 PPO/A2C model with ``ArmSetPolicy`` holding the trained weights."""
    venv, transform, _ = make_training_env(
        config.env_id, 1, seed=config.seed, env_kwargs=kwargs, transform=transform, backend="native"
    )
    extra = {"n_steps": 8, "batch_size": 8} if config.algo == "ppo" else {"n_steps": 8}
    model = ALGOS[config.algo](
        ArmSetPolicy,
        venv,
        device="cpu",
        seed=config.seed,
        policy_kwargs={
            "n_arms": transform.n_arms,
            "arm_features": len(transform.features),
            "hidden": result_net.hidden,
            "layers": result_net.layers,
        },
        **extra,
    )
    result_net.export(model.policy)
    venv.close()
    return model


def _load_initial(net: FastArmSetNet, initial: FastArmSetNet) -> None:
    """Copy ``initial``'s weights into ``net``; a clear error when the layouts differ."""
    if not isinstance(initial, FastArmSetNet):
        raise TypeError(f"initial must be a FastArmSetNet, not {type(initial).__name__}")
    layout = (
        "arm_features",
        "n_global",
        "logits_per_arm",
        "stop",
        "hidden",
        "layers",
        "shared",
        "recurrent",
    )
    theirs = {name: getattr(initial, name) for name in layout}
    ours = {name: getattr(net, name) for name in layout}
    if theirs != ours:
        raise ValueError(
            f"initial network's layout {theirs} is not this config's {ours} (only n_arms "
            "may differ)"
        )
    net.load_state_dict(initial.state_dict())


def fast_train(
    config: FastConfig,
    *,
    initial: FastArmSetNet | None = None,
    log: Callable[[str], None] | None = print,
) -> FastResult:
    """Train ``config.algo`` on the fast path; validate, export and (optionally) save it.

    ``initial``: start from this network's weights (a curriculum's earlier stage, e.g.
    ``FastResult.net`` of another family): the arm-set weights do not depend on the
    number of arms, so a network of another ``n`` (or budget) fits when its features,
    global entries, action layout and sizes are this config's. The optimizer starts
    afresh.

    ``config.recurrent``: the network is not exported (``FastResult.model`` is ``None``;
    ``FastConfig`` refuses a ``save_path``), and the metadata's policy is
    ``"arm-set-gru"``. ``torch.compile`` applies to its rollout forward passes too.
    """
    if not isinstance(config, FastConfig):
        raise TypeError(f"fast_train() takes a FastConfig, not {type(config).__name__}")
    say = log or (lambda _msg: None)
    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    kwargs = training_kwargs(config.env_id, config.env_kwargs)
    transform = _transform(config, kwargs)
    net, law = _network(config, transform, kwargs)
    if initial is not None:
        _load_initial(net, initial)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, eps=1e-5)
    rollouts = Rollouts(
        config.env_id,
        kwargs,
        transform,
        config.num_envs,
        config.seed,
        reward=config.reward,
        reward_scale=config.reward_scale,
        prior=config.prior,
    )
    per_update = config.num_envs * config.n_steps
    eval_every = config.eval_every or max(config.total_timesteps, 1)
    next_eval = eval_every
    curve: list[dict[str, Any]] = []
    progress = None
    if config.progress_bar:
        from tqdm.auto import tqdm

        progress = tqdm(total=config.total_timesteps, desc=f"fast {config.algo}", unit="step")
    say(
        f"fast {config.algo} on {config.env_id} {kwargs}: {config.num_envs} envs x "
        f"{config.n_steps} steps per update, {config.total_timesteps} steps"
        + (f", at most {config.max_cpu_seconds:.0f} CPU-s" if config.max_cpu_seconds else "")
    )
    steps, eval_cpu, start = 0, 0.0, time.process_time()
    wall = time.perf_counter()
    forward = torch.compile(net, dynamic=False) if config.compile else net
    steps = rollouts.stagger(net, law, episode_horizon(kwargs), generator, forward)

    best: tuple[dict[str, torch.Tensor], dict[str, Any]] | None = None

    def validate() -> None:
        nonlocal eval_cpu, best
        if config.eval_episodes <= 0:
            return
        t0 = time.process_time()
        entry: dict[str, Any] = {"timesteps": steps}
        for mode in ("deterministic", "sampled"):
            scores = play_scores(
                net,
                law,
                config.env_id,
                kwargs,
                transform,
                config.eval_episodes,
                VALIDATION_SEED0,
                config.prior,
                deterministic=mode == "deterministic",
            )
            half = 1.96 * scores.std(ddof=1) / math.sqrt(len(scores))
            entry[mode] = {"score": float(scores.mean()), "score_ci": float(half)}
        # the mode this checkpoint would play, and its score: what keep_best compares
        entry["mode"] = "deterministic" if keep_deterministic(entry) else "sampled"
        entry["score"] = entry[entry["mode"]]["score"]
        if config.keep_best and (best is None or entry["score"] < best[1]["score"]):
            best = ({k: v.detach().clone() for k, v in net.state_dict().items()}, entry)
        eval_cpu += time.process_time() - t0
        recent = rollouts.scores[-config.num_envs :]
        entry["cpu_seconds"] = round(time.process_time() - start - eval_cpu, 2)
        entry["training_score"] = float(np.mean(recent)) if recent else float("nan")
        curve.append(entry)
        det, sam = entry["deterministic"], entry["sampled"]
        say(
            f"  {steps:>11,} steps  {entry['cpu_seconds']:8.1f} CPU-s  validation: "
            f"deterministic {det['score']:.5f} +- {det['score_ci']:.5f}, "
            f"sampled {sam['score']:.5f} +- {sam['score_ci']:.5f}; "
            f"training {entry['training_score']:.5f}"
        )

    try:
        while steps < config.total_timesteps:
            spent = time.process_time() - start - eval_cpu
            if config.max_cpu_seconds is not None and spent >= config.max_cpu_seconds:
                say(f"  CPU limit reached after {steps:,} steps")
                break
            if config.max_seconds is not None and time.perf_counter() - wall >= config.max_seconds:
                say(f"  time limit reached after {steps:,} steps")
                break
            rollout = rollouts.collect(
                net, law, config.n_steps, config.gamma, config.gae_lambda, generator, forward
            )
            if config.lr_schedule == "linear":
                left = max(0.0, 1.0 - steps / max(config.total_timesteps, 1))
                for group in optimizer.param_groups:
                    group["lr"] = config.learning_rate * left
            _update(net, law, optimizer, rollout, config, generator)
            steps += per_update
            if progress is not None:
                progress.update(per_update)
            if steps >= next_eval:
                validate()
                next_eval += eval_every
        if not curve or curve[-1]["timesteps"] != steps:
            validate()
    finally:
        rollouts.close()
        if progress is not None:
            progress.close()
    cpu = time.process_time() - start - eval_cpu
    seconds = time.perf_counter() - wall
    say(f"  {steps:,} steps in {cpu:.1f} CPU-s ({steps / max(cpu, 1e-9):,.0f} steps per CPU-s)")
    model = None if config.recurrent else to_sb3(net, config, kwargs, transform)
    training: dict[str, Any] = {
        "path": "fast",
        "policy": "arm-set-gru" if config.recurrent else "arm-set",
        "fast_config": jsonable({k: v for k, v in asdict(config).items() if k != "save_path"}),
        "seed": config.seed,
        "warm_start": initial is not None,
        "reward": config.reward,
        "reward_scale": config.reward_scale,
        "timesteps": steps,
        "cpu_seconds": round(cpu, 1),
        "seconds": round(seconds, 1),
        "validation_cpu_seconds": round(eval_cpu, 2),
        "evaluations": curve,
    }
    metadata = policy_metadata(config.algo, config.env_id, kwargs, transform, training)
    if curve:  # as the SB3 path: sample only if clearly better on validation
        metadata["policy_agent"]["deterministic"] = keep_deterministic(curve[-1])
    if config.prior is not None:
        metadata["policy_agent"].update(answer="posterior", prior=list(config.prior))
    path = None
    if config.save_path is not None:
        path = save_policy(model, config.save_path, metadata)
        say(f"saved {path} (+ {sidecar_path(path).name})")
    result = FastResult(net, transform, metadata, model, path, curve)
    if best is not None:
        result.best = _best_result(result, config, kwargs, *best)
        at = result.best.metadata["training"]["best_at"]
        say(
            f"  best checkpoint: {at['timesteps']:,} steps, {at['mode']}, validation score "
            f"{at['score']:.5f}" + (f" (saved {result.best.path})" if result.best.path else "")
        )
    return result


def _best_result(
    final: FastResult,
    config: FastConfig,
    kwargs: Mapping[str, Any],
    state: Mapping[str, torch.Tensor],
    at: Mapping[str, Any],
) -> FastResult:
    """The best validated checkpoint (``keep_best``) as a :class:`FastResult`, saved as
    ``<save_path>-best.zip`` when the final model is saved."""
    net = copy.deepcopy(final.net)
    net.load_state_dict(state)
    metadata = copy.deepcopy(final.metadata)
    metadata["training"]["best_at"] = dict(at)
    metadata["policy_agent"]["deterministic"] = at["mode"] == "deterministic"
    model = None if config.recurrent else to_sb3(net, config, kwargs, final.transform)
    path = None
    if config.save_path is not None:
        path = save_policy(model, best_checkpoint_path(config.save_path), metadata)
    return FastResult(net, final.transform, metadata, model, path, final.curve)
