"""Instance families for learning, and the environment a trained policy is played on.

:data:`LADDER` is a ladder of named tasks for RL baselines (one pull per step, batches
under a pull budget, a binding batch count, 50 arms, fixed confidence with a cost per
batch, the misidentification objective), each a preset of :data:`PRESETS` (with the
``TopK-PullByPull-v0`` form of the batch tasks) that ``topk-bench train --preset`` and
``[[train]] preset`` accept; :func:`preset_kwargs` applies overrides to a preset;
:func:`training_kwargs` checks and completes the ``gym.make`` kwargs of a training
family; :func:`evaluation_env` gives the benchmark form of a family (``TopK-Batch-v0``,
``answer="agent"``, paired), where scripted agents and learned policies play the same
episodes for the same seeds. No stable-baselines3 or torch here.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bandit_envs.problem import check_spendable_budget

__all__ = [
    "LADDER",
    "PRESETS",
    "PULL_BY_PULL_ID",
    "Task",
    "episode_score",
    "evaluation_env",
    "family_prior",
    "preset_kwargs",
    "reference_agents",
    "reference_label",
    "score_name",
    "space_text",
    "task_of",
    "training_kwargs",
]

#: The env id of a batch family composed pull by pull.
PULL_BY_PULL_ID = "TopK-PullByPull-v0"
#: The prior of every ladder family: Bernoulli arms whose means are drawn from Beta(5, 5)
#: per episode (and shuffled).
BETA_5_5: dict[str, Any] = {"instance": "beta-random", "instance_params": {"a": 5.0, "b": 5.0}}
#: The batch shape of the batch tasks: at most b = 10 pulls per batch, r = 5 per arm.
BATCH_10_5: dict[str, Any] = {"batch_size": 10, "repeat_limit": 5}
#: The price of a batch in the ``fixed-confidence`` task.
FIXED_CONFIDENCE_COST = 0.001
#: The delta of the posterior stop of that task's cost-aware reference (``bayes_ttts``
#: with the prior): the best of 0.1, 0.2, ..., 0.9 for the task's cost on 2,000
#: validation episodes (``benchmarks/fixed_confidence_stop.py``).
FIXED_CONFIDENCE_STOP_DELTA = 0.7
#: The action spaces of the ladder's training envs (:func:`space_text`).
_BATCH_ACTIONS = "BatchPulls(n_arms=10, batch_size=10, repeat_limit=5)"
#: The observation of 10 arms (TopK-v0, TopK-Batch-v0) with at most ``{}`` pulls of an arm.
_OBS_10 = (
    "Dict(counts: int64[10] in [0, {}], means: float64[10] in [0, 1], "
    "remaining: float64[1] in [0, 1])"
)
#: The observation of TopK-PullByPull-v0 (the batch being composed, r = 5, comes first).
_OBS_10_PBP = (
    "Dict(batch: int64[10] in [0, 5], counts: int64[10] in [0, {}], "
    "means: float64[10] in [0, 1], remaining: float64[1] in [0, 1])"
)


#: Reference agents that take the family's Beta prior (``a``, ``b``) as parameters.
PRIOR_AGENTS = frozenset({"kg", "bayes_ttts", "bayes_dp"})


@dataclass(frozen=True)
class Task:
    """A task of the ladder: a training family, how it is scored, and what makes it hard.

    Attributes:
        name: the preset name (``topk-bench train --preset NAME``, ``[[train]] preset``).
        env_id: ``"TopK-v0"`` (one pull per step) or ``"TopK-Batch-v0"``.
        kwargs: the ``gym.make`` kwargs of the family.
        hard: what makes the task hard (the ladder table).
        spaces: the documented ``(action space, observation space)`` of the training env
            of each preset of the task (``NAME`` and, for a batch task, ``NAME-pbp``), in
            the form of :func:`space_text`.
        reference: the scripted and Bayesian agents the task is scored against: a
            registered name, or ``(name, params)`` for an agent with parameters of its
            own (:func:`reference_agents` adds the prior): a normalised score is 0 for
            ``uniform`` and 1 for the best of them.
    """

    name: str
    env_id: str
    kwargs: Mapping[str, Any]
    hard: str
    spaces: Mapping[str, tuple[str, str]]
    reference: tuple[str | tuple[str, Mapping[str, Any]], ...]

    @property
    def score(self) -> str:
        """What an episode of the task scores (:func:`score_name`; lower is better)."""
        return score_name(self.kwargs)

    @property
    def pull_by_pull(self) -> str | None:
        """The preset of the ``TopK-PullByPull-v0`` form (batch tasks), else ``None``."""
        return f"{self.name}-pbp" if self.env_id == "TopK-Batch-v0" else None

    @property
    def cost_per_batch(self) -> float:
        """The price of a batch (0 but in fixed confidence)."""
        return float(self.kwargs.get("cost_per_batch", 0.0))

    def episode_score(self, aggregate_regret: Any, misidentified: Any, batches: Any) -> Any:
        """The task's score of episodes (scalars or arrays; lower is better)."""
        return episode_score(self.kwargs, aggregate_regret, misidentified, batches)


def score_name(env_kwargs: Mapping[str, Any]) -> str:
    """What an episode of a family scores (lower is better): its negative return.

    ``"misidentified"`` (``objective="misidentification"``), ``"cost"`` (fixed
    confidence with a ``cost_per_batch``: the aggregate regret of the answer plus the
    cost of the batches used; a truncated episode is scored with the env's empirical
    answer), else ``"aggregate_regret"``.
    """
    if env_kwargs.get("objective") == "misidentification":
        return "misidentified"
    if env_kwargs.get("setting") == "fixed_confidence" and env_kwargs.get("cost_per_batch"):
        return "cost"
    return "aggregate_regret"


def episode_score(
    env_kwargs: Mapping[str, Any], aggregate_regret: Any, misidentified: Any, batches: Any
) -> Any:
    """The score (:func:`score_name`) of episodes of a family: scalars or arrays."""
    name = score_name(env_kwargs)
    if name == "misidentified":
        return misidentified
    if name == "cost":
        return aggregate_regret + float(env_kwargs["cost_per_batch"]) * batches
    return aggregate_regret


#: The ladder of named tasks, easiest first (``docs/learned.md`` has the table).
LADDER: dict[str, Task] = {
    task.name: task
    for task in (
        Task(
            "one-pull",
            "TopK-v0",
            {**BETA_5_5, "n_arms": 10, "k": 3, "budget": 200},
            "a terminal reward only (the regret of the answer after 200 steps); small gaps "
            "between Beta(5, 5) means",
            {"one-pull": ("Discrete(11)", _OBS_10.format(200))},
            ("uniform", "sar", "lucb", "eb_tc", "kg", "bayes_ttts"),
        ),
        Task(
            "batch-budget",
            "TopK-Batch-v0",
            {**BETA_5_5, "n_arms": 10, "k": 3, "budget": 200, **BATCH_10_5},
            "a vector action (0..5 pulls of each arm, at most 10 in all); an action over the "
            "limits is projected while training (the pull-by-pull form masks it instead)",
            {
                "batch-budget": (_BATCH_ACTIONS, _OBS_10.format(200)),
                "batch-budget-pbp": ("MaskedDiscrete(11)", _OBS_10_PBP.format(200)),
            },
            ("uniform", "batch_sar", "halving", "lucb", "kg", "bayes_ttts"),
        ),
        Task(
            "batch-count",
            "TopK-Batch-v0",
            {**BETA_5_5, "n_arms": 10, "k": 3, "budget": 80, "max_batches": 8, **BATCH_10_5},
            "8 batches in all: a batch not filled is pulls lost, so a policy must plan how "
            "to spread every batch",
            {
                "batch-count": (_BATCH_ACTIONS, _OBS_10.format(80)),
                "batch-count-pbp": ("MaskedDiscrete(11)", _OBS_10_PBP.format(80)),
            },
            ("uniform", "batch_sar", "halving", "lucb", "kg", "bayes_ttts"),
        ),
        Task(
            "large",
            "TopK-v0",
            {**BETA_5_5, "n_arms": 50, "k": 5, "budget": 500},
            "50 arms (5x the observation and the actions), 500-step episodes, 10 pulls per arm",
            {
                "large": (
                    "Discrete(51)",
                    "Dict(counts: int64[50] in [0, 500], means: float64[50] in [0, 1], "
                    "remaining: float64[1] in [0, 1])",
                )
            },
            ("uniform", "sar", "lucb", "eb_tc", "kg", "bayes_ttts"),
        ),
        Task(
            "fixed-confidence",
            "TopK-Batch-v0",
            {
                **BETA_5_5,
                "n_arms": 10,
                "k": 3,
                "setting": "fixed_confidence",
                "cost_per_batch": FIXED_CONFIDENCE_COST,
                "max_batches": 100,
                **BATCH_10_5,
            },
            "when to stop: every batch costs 0.001, the answer's regret is paid at the stop "
            "(the all-zero batch); 100 batches truncate (cost 0.1)",
            {
                "fixed-confidence": (_BATCH_ACTIONS, _OBS_10.format(1000)),
                "fixed-confidence-pbp": ("MaskedDiscrete(11)", _OBS_10_PBP.format(1000)),
            },
            (
                "uniform",
                "lucb",
                "lil_lucb",
                "batch_racing",
                "eb_tc",
                "bayes_ttts",
                ("bayes_ttts", {"delta": FIXED_CONFIDENCE_STOP_DELTA}),
            ),
        ),
        Task(
            "misid",
            "TopK-v0",
            {**BETA_5_5, "n_arms": 10, "k": 1, "budget": 200, "objective": "misidentification"},
            "a 0/1 terminal reward (-1 if the answer is not the best arm): the sparsest "
            "signal of the ladder",
            {"misid": ("Discrete(11)", _OBS_10.format(200))},
            ("uniform", "sequential_halving", "successive_rejects", "ttts", "eb_tc", "kg"),
        ),
    )
}


def family_prior(env_kwargs: Mapping[str, Any]) -> tuple[float, float] | None:
    """The Beta prior ``(a, b)`` a family draws its Bernoulli means from, or ``None``.

    A family has one when its instance is ``"beta-random"`` (its ``a``, ``b``, default
    Beta(5, 5)) and its rewards are Bernoulli (the default distribution).
    """
    if env_kwargs.get("instance") != "beta-random":
        return None
    if env_kwargs.get("distribution", "bernoulli") != "bernoulli":
        return None
    params = dict(env_kwargs.get("instance_params") or {})
    return float(params.get("a", 5.0)), float(params.get("b", 5.0))


def reference_agents(task: Task) -> list[tuple[str, dict[str, Any]]]:
    """``(name, params)`` of the task's reference agents (:attr:`Task.reference`): the
    prior-aware ones (:data:`PRIOR_AGENTS`) get the family's Beta prior ``a``, ``b``
    before their own parameters."""
    prior = task.kwargs.get("instance_params", {})
    out = []
    for entry in task.reference:
        name, own = (entry, {}) if isinstance(entry, str) else (entry[0], dict(entry[1]))
        given = {"a": prior["a"], "b": prior["b"]} if name in PRIOR_AGENTS else {}
        out.append((name, {**given, **own}))
    return out


def reference_label(name: str, params: Mapping[str, Any]) -> str:
    """A reference agent's label in the tables: its name, then ``prior`` if it has the
    family's prior (:data:`PRIOR_AGENTS`) and its own parameters in parentheses:
    ``uniform``, ``kg (prior)``, ``bayes_ttts (prior, delta=0.7)``."""
    prior = name in PRIOR_AGENTS and bool(params)
    own = {key: value for key, value in params.items() if not (prior and key in ("a", "b"))}
    marks = ["prior"] * prior + [
        f"{key}={value:g}" if isinstance(value, (int, float)) else f"{key}={value}"
        for key, value in own.items()
    ]
    return f"{name} ({', '.join(marks)})" if marks else name


def space_text(space: Any) -> str:
    """A space in the ladder table's form: a ``Dict`` as ``Dict(key: ..., ...)``, a
    ``Box`` with one bound as ``dtype[shape] in [low, high]``, anything else its repr."""
    import numpy as np
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return "Dict(" + ", ".join(f"{k}: {space_text(v)}" for k, v in space.spaces.items()) + ")"
    if isinstance(space, spaces.Box):
        low, high = np.unique(space.low), np.unique(space.high)
        if len(low) == 1 and len(high) == 1:
            shape = "x".join(map(str, space.shape))
            return f"{space.dtype.name}[{shape}] in [{low[0]:g}, {high[0]:g}]"
    return repr(space)


def _presets() -> dict[str, tuple[str, dict[str, Any]]]:
    out: dict[str, tuple[str, dict[str, Any]]] = {
        # the two families of learned-vs-scripted (one-pull and batch-budget)
        "standard": ("TopK-v0", dict(LADDER["one-pull"].kwargs)),
        "batch": (
            "TopK-Batch-v0",
            {**LADDER["batch-budget"].kwargs, "invalid_action": "project"},
        ),
    }
    for task in LADDER.values():
        kwargs = dict(task.kwargs)
        if task.env_id == "TopK-Batch-v0":
            out[task.name] = (task.env_id, {**kwargs, "invalid_action": "project"})
            out[f"{task.name}-pbp"] = (PULL_BY_PULL_ID, {**kwargs, "invalid_action": "raise"})
        else:
            out[task.name] = (task.env_id, kwargs)
    return out


#: Training families by name: the ladder's tasks (:data:`LADDER`; a batch task ``NAME``
#: trains on ``TopK-Batch-v0`` with ``invalid_action="project"``, its form ``NAME-pbp``
#: on ``TopK-PullByPull-v0`` in raise mode, for sb3-contrib's ``MaskablePPO``), and the
#: two families of ``learned-vs-scripted``: ``standard`` (= ``one-pull``) and ``batch``
#: (= ``batch-budget``).
PRESETS: dict[str, tuple[str, dict[str, Any]]] = _presets()


def task_of(preset: str) -> Task:
    """The ladder task a preset trains on (``standard`` is ``one-pull``, ``batch``
    ``batch-budget``, ``NAME-pbp`` ``NAME``)."""
    name = {"standard": "one-pull", "batch": "batch-budget"}.get(preset, preset)
    name = name.removesuffix("-pbp")
    if name not in LADDER:
        raise ValueError(f"preset={preset!r} is not a task of the ladder {sorted(LADDER)}")
    return LADDER[name]


def preset_kwargs(
    name: str, overrides: Mapping[str, Any] | None = None
) -> tuple[str, dict[str, Any]]:
    """The env id and ``gym.make`` kwargs of preset ``name`` updated by ``overrides``.

    A preset's budget is kept unless overridden; if the overrides make it impossible to
    spend (``max_batches`` batches of at most ``min(b, n r)`` pulls hold fewer pulls),
    the preset is refused with a ``ValueError`` naming the budget, ``max_batches`` and
    how many pulls fit (the environment refuses such a budget too).
    """
    if name not in PRESETS:
        raise ValueError(f"preset={name!r} must be one of {sorted(PRESETS)}")
    env_id, preset = PRESETS[name]
    overrides = dict(overrides or {})
    kwargs = {**preset, **overrides}
    budget, max_batches = kwargs.get("budget"), kwargs.get("max_batches")
    if (
        "budget" not in overrides
        and budget is not None
        and max_batches is not None
        and kwargs.get("setting", "fixed_budget") == "fixed_budget"
    ):
        batch_size = 1 if env_id.endswith("TopK-v0") else kwargs.get("batch_size", 5)
        repeat = 1 if env_id.endswith("TopK-v0") else kwargs.get("repeat_limit", batch_size)
        try:
            check_spendable_budget(
                budget, max_batches, batch_size, repeat, kwargs.get("n_arms", 10)
            )
        except ValueError as err:
            raise ValueError(
                f"preset {name!r} sets budget={budget}: {err}; give a budget too (--env budget=N)"
            ) from None
    return env_id, kwargs


def evaluation_env(env_id: str, env_kwargs: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The benchmark form of a training family: ``TopK-Batch-v0``, ``answer="agent"``, paired.

    A ``TopK-v0`` family becomes ``TopK-Batch-v0`` with ``batch_size=1`` (the same
    problem; scripted agents need the batch id). A batch family keeps its kwargs but
    not ``invalid_action``: the policy plays the env the scripted agents play, and
    :class:`~agents.learned.adapter.PolicyAgent` maps its pull vectors into the action
    set with the env's own projection rule (the same pulls ``invalid_action="project"``
    would make). A ``TopK-PullByPull-v0`` family is the batch family it composes (the
    same episodes for the same seeds); ``PolicyAgent`` composes each batch pull by pull
    with the policy, as that env would.
    """
    kwargs = dict(env_kwargs)
    kwargs.pop("render_mode", None)
    kwargs.pop("invalid_action", None)
    if env_id in ("TopK-v0", "bandit_envs:TopK-v0"):
        kwargs.update(batch_size=1, repeat_limit=1)
    elif env_id.removeprefix("bandit_envs:") not in ("TopK-Batch-v0", PULL_BY_PULL_ID):
        raise ValueError(
            f"env_id={env_id!r} must be 'TopK-v0', 'TopK-Batch-v0' or {PULL_BY_PULL_ID!r}"
        )
    kwargs["answer"] = "agent"
    kwargs["paired"] = True
    return "TopK-Batch-v0", kwargs


def training_kwargs(env_id: str, env_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``gym.make`` kwargs of a training family: checked, ``shuffle=True`` by default.

    ``TopK-Batch-v0`` trains with ``invalid_action="project"`` (any other value raises);
    ``TopK-PullByPull-v0`` in ``"raise"`` mode (the default: a masked policy, which
    never takes an invalid sub-step) or ``"project"``.
    """
    kwargs = dict(env_kwargs or {})
    if env_id.endswith("TopK-Batch-v0"):
        if kwargs.setdefault("invalid_action", "project") != "project":
            raise ValueError("training on TopK-Batch-v0 needs invalid_action='project'")
    elif env_id.endswith(PULL_BY_PULL_ID):
        if kwargs.setdefault("invalid_action", "raise") not in ("raise", "project"):
            raise ValueError(
                f"invalid_action={kwargs['invalid_action']!r} must be 'raise' or 'project'"
            )
    elif not env_id.endswith("TopK-v0"):
        raise ValueError(
            f"env_id={env_id!r} must be 'TopK-v0', 'TopK-Batch-v0' or {PULL_BY_PULL_ID!r}"
        )
    kwargs.setdefault("shuffle", True)
    if not kwargs["shuffle"]:
        warnings.warn(
            "shuffle=False: the policy may learn the arm order instead of the problem", stacklevel=3
        )
    kwargs["render_mode"] = None
    return kwargs
