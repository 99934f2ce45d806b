"""Instance families for learning, and the environment a trained policy is played on.

:data:`PRESETS` are the families of ``learned-vs-scripted`` (:func:`preset_kwargs`
applies overrides to one); :func:`training_kwargs` checks and completes the
``gym.make`` kwargs of a training family;
:func:`evaluation_env` gives the benchmark form of a family (``TopK-Batch-v0``,
``answer="agent"``, paired), where scripted agents and learned policies play the same
episodes for the same seeds. No stable-baselines3 or torch here.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from bandit_envs.problem import check_spendable_budget

__all__ = ["PRESETS", "evaluation_env", "preset_kwargs", "training_kwargs"]

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
    would make).
    """
    kwargs = dict(env_kwargs)
    kwargs.pop("render_mode", None)
    kwargs.pop("invalid_action", None)
    if env_id in ("TopK-v0", "bandit_envs:TopK-v0"):
        kwargs.update(batch_size=1, repeat_limit=1)
    elif env_id not in ("TopK-Batch-v0", "bandit_envs:TopK-Batch-v0"):
        raise ValueError(f"env_id={env_id!r} must be 'TopK-v0' or 'TopK-Batch-v0'")
    kwargs["answer"] = "agent"
    kwargs["paired"] = True
    return "TopK-Batch-v0", kwargs


def training_kwargs(env_id: str, env_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``gym.make`` kwargs of a training family: checked, ``shuffle=True`` by default.

    ``TopK-Batch-v0`` trains with ``invalid_action="project"`` (any other value raises).
    """
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
