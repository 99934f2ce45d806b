"""Command-line options of :func:`agents.learned.training.train` (``topk-bench train``).

:func:`add_train_arguments` adds them to a parser, :func:`train_from_args` trains with
them and, with ``--compare``, compares the policy with scripted agents on held-out
episodes (:func:`compare_from_args`); ``topk-bench train`` and
``examples/train_ppo.py`` are both this.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import gymnasium as gym

from agents.learned.algos import ALGOS
from agents.learned.evaluation import TABLE_HEADER, Summary, compare
from agents.learned.families import (
    PRESETS,
    preset_kwargs,
    training_kwargs,
)
from agents.learned.fast import fast_train
from agents.learned.training import TrainConfig, train
from agents.registry import available, make

#: The default training steps of the SB3 path and of the fast path.
SB3_TIMESTEPS = 20_000
FAST_TIMESTEPS = 20_000_000
#: Options the fast path does not take, with their defaults (a changed one is refused).
_NOT_FAST = {
    "policy": None,
    "backend": "auto",
    "sample": "auto",
}

__all__ = [
    "add_train_arguments",
    "check_train_args",
    "compare_from_args",
    "parse_env",
    "train_from_args",
]


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
    parser.add_argument(
        "--fast",
        action="store_true",
        help="the fast path (agents.learned.fast): PPO or A2C over a native vector env with "
        "a cheap arm-set network; the family's Beta prior and the posterior reward by default",
    )
    parser.add_argument(
        "--timesteps",
        type=int,
        default=None,
        help=f"training steps (all envs; default {SB3_TIMESTEPS:,}, --fast {FAST_TIMESTEPS:,})",
    )
    parser.add_argument(
        "--num-envs", type=int, default=None, help="parallel envs (default 8, --fast 4096)"
    )
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
        "--prior",
        type=float,
        nargs=2,
        default=None,
        metavar=("A", "B"),
        help="the family's means are drawn from Beta(A, B) and the policy knows it: "
        "post_* features allowed, answers with the posterior top k (--fast: the family's "
        "own Beta prior by default)",
    )
    parser.add_argument(
        "--no-prior",
        action="store_true",
        help="--fast: do not give the policy the family's prior (counts and means only)",
    )
    parser.add_argument(
        "--reward",
        choices=["env", "posterior"],
        default=None,
        help="training reward: the env's terminal reward, or the change of the posterior "
        "top-k value at every step (needs a prior; default env, --fast posterior when the "
        "policy knows a prior and the task scores the aggregate regret)",
    )
    parser.add_argument(
        "--sample",
        choices=["auto", "yes", "no"],
        default="auto",
        help="play the saved policy by seeded sampling (yes), its most likely action (no), "
        "or whichever validates better (auto)",
    )
    parser.add_argument("--eval-every", type=int, default=None, help="steps between evaluations")
    parser.add_argument(
        "--eval-episodes",
        type=int,
        default=None,
        help="validation episodes per evaluation (default 100, --fast 1000)",
    )
    parser.add_argument("--max-seconds", type=float, default=None, help="wall-clock limit")
    parser.add_argument("--max-cpu-seconds", type=float, default=None, help="CPU-time limit")
    parser.add_argument("--out", default=None, help="save the model there (.zip and .json)")
    parser.add_argument(
        "--keep-best", action="store_true", help="also save the best evaluated model"
    )
    parser.add_argument("--progress", action="store_true", help="show a progress bar")
    parser.add_argument(
        "--compare",
        default="",
        metavar="AGENTS",
        help="comma-separated scripted agents (agents.make names) to compare with the trained "
        "policy on the same held-out episodes, e.g. uniform,sar,batch_sar",
    )
    parser.add_argument(
        "--test-episodes", type=int, default=200, help="held-out episodes for --compare"
    )
    return parser


def check_train_args(args: Any) -> tuple[str, dict[str, Any]]:
    """The env id and kwargs of ``--preset`` and ``--env``, checked before any training.

    Raises:
        ValueError: a bad ``--env`` item, kwargs the environment refuses (for example
            a preset's budget that ``--env max_batches=...`` makes unspendable), or a
            ``--compare`` name that is not an agent; the message names the value.
    """
    env_id, env_kwargs = preset_kwargs(args.preset, parse_env(args.env))
    kwargs = training_kwargs(env_id, env_kwargs)
    gym.make(env_id, disable_env_checker=True, **kwargs).close()  # the env's own checks
    names = [name for name in getattr(args, "compare", "").split(",") if name]
    unknown = [name for name in names if name not in available() and ":" not in name]
    if unknown:
        raise ValueError(
            f"--compare {','.join(unknown)}: not agent names (agents.available(): "
            f"{', '.join(available())})"
        )
    return env_id, env_kwargs


def parse_env(items: Iterable[str]) -> dict[str, Any]:
    """``--env KEY=VALUE`` items as kwargs (``VALUE`` parsed as JSON, else a string)."""
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


def train_from_args(args: Any, log: Callable[[str], None] | None = print) -> Any:
    """Run :func:`train` (or, with ``--fast``, :func:`~agents.learned.fast.fast_train`).

    With ``--compare``, then play the trained policy and the named scripted agents on
    the same ``--test-episodes`` held-out seeds (:func:`compare_from_args`).
    """
    env_id, env_kwargs = check_train_args(args)
    if getattr(args, "fast", False):
        result = fast_train(fast_config_from_args(args, env_id, env_kwargs), log=log)
        if getattr(args, "compare", ""):
            compare_from_args(args, result, log)
        return result
    if getattr(args, "no_prior", False):
        raise ValueError("--no-prior is an option of --fast (the SB3 path has no prior by default)")
    args.timesteps = SB3_TIMESTEPS if args.timesteps is None else args.timesteps
    args.num_envs = 8 if args.num_envs is None else args.num_envs
    args.reward = args.reward or "env"
    args.eval_episodes = 100 if args.eval_episodes is None else args.eval_episodes
    policy = args.policy or ("mlp" if args.algo == "dqn" else "arm-set")
    obs_options = {"features": args.features.split(",")} if args.features else None
    config = TrainConfig(
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
        prior=tuple(args.prior) if args.prior else None,
        reward=args.reward,
        eval_every=args.eval_every,
        eval_episodes=args.eval_episodes,
        save_path=args.out,
        keep_best=args.keep_best,
        max_seconds=args.max_seconds,
        max_cpu_seconds=args.max_cpu_seconds,
        progress_bar=args.progress,
        sample={"auto": None, "yes": True, "no": False}[args.sample],
        backend=args.backend,
    )
    result = train(config, log=log)
    if getattr(args, "compare", ""):
        compare_from_args(args, result, log)
    return result


def fast_config_from_args(args: Any, env_id: str, env_kwargs: dict[str, Any]) -> Any:
    """The :class:`~agents.learned.fast.FastConfig` of ``--fast`` and the options that apply.

    ``--algo`` is ``ppo`` or ``a2c``; ``--algo-kwargs`` sets :class:`FastConfig` fields
    (e.g. ``{"learning_rate": 3e-4, "gamma": 0.9}``). The policy knows the family's
    Beta prior (:func:`~agents.learned.families.family_prior`) unless ``--no-prior`` or
    ``--prior A B`` says otherwise, and trains on the posterior reward when it knows a
    prior and the task scores the aggregate regret (a fixed budget), unless
    ``--reward env``. An option of the SB3
    path only (``--policy``, ``--backend``, ``--sample``) is a
    ``ValueError`` naming it.
    """
    from agents.learned.fast import FAST_ALGOS, FastConfig

    for name, default in _NOT_FAST.items():
        if getattr(args, name, default) != default:
            raise ValueError(
                f"--{name.replace('_', '-')} is an option of the SB3 path, not of --fast"
            )
    if args.algo not in FAST_ALGOS:
        raise ValueError(f"--algo {args.algo}: --fast trains {' or '.join(FAST_ALGOS)}")
    if args.no_prior and args.prior:
        raise ValueError("--no-prior and --prior A B contradict each other")
    prior: Any = None if args.no_prior else (tuple(args.prior) if args.prior else "auto")
    known = set(FastConfig.__dataclass_fields__)
    extra = dict(args.algo_kwargs or {})
    unknown = sorted(set(extra) - known)
    if unknown:
        raise ValueError(f"--algo-kwargs {unknown}: not FastConfig fields ({sorted(known)})")
    if extra.get("recurrent"):
        raise ValueError(
            "--algo-kwargs recurrent=true: topk-bench train --fast trains models to save "
            "and play, which are feed-forward; the recurrent variant is for measurement "
            "(fast_train(FastConfig(..., recurrent=True)), benchmarks/fast_training.py)"
        )
    return FastConfig(
        env_id,
        env_kwargs,
        algo=args.algo,
        total_timesteps=FAST_TIMESTEPS if args.timesteps is None else args.timesteps,
        seed=args.seed,
        reward=args.reward or "auto",
        reward_scale=args.reward_scale,
        prior=prior,
        features=tuple(args.features.split(",")) if args.features else None,
        eval_every=args.eval_every,
        eval_episodes=1000 if args.eval_episodes is None else args.eval_episodes,
        keep_best=args.keep_best,
        max_cpu_seconds=args.max_cpu_seconds,
        max_seconds=args.max_seconds,
        save_path=args.out,
        progress_bar=args.progress,
        **({} if args.num_envs is None else {"num_envs": args.num_envs}),
        **extra,
    )


def compare_from_args(
    args: Any, result: Any, log: Callable[[str], None] | None = print
) -> list[Summary]:
    """``--compare``: the trained policy and the scripted agents on the same held-out episodes.

    Episodes run on :func:`~agents.learned.families.evaluation_env` of the training
    family with the seeds ``TEST_SEED0 + j`` (disjoint from training and validation);
    one Markdown table row per player goes to ``log``.
    """
    names = [name for name in args.compare.split(",") if name]
    env_id, env_kwargs = result.metadata["env_id"], result.metadata["env_kwargs"]
    players: dict[str, Any] = {args.algo: result.agent()}
    for name in names:
        players[name] = lambda name=name: make(name)
    if log is not None:
        log(f"\n{args.test_episodes} held-out episodes, same seeds for every agent:")
        log(TABLE_HEADER)
    return compare(players, env_id, env_kwargs, args.test_episodes, log=log)
