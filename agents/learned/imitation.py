"""Imitation of a prior-aware teacher (DAgger), the warm start of a learned policy.

A policy trained from scratch by PPO on a terminal regret learns slowly on the
``learned-vs-scripted`` family (docs/experiments/learned-vs-scripted.md). When the family's means
are drawn from a known Beta prior, a Bayesian teacher is available whose decision is a function of
the observation alone: the knowledge gradient (KG*,
:func:`agents.bayesian.knowledge_gradient.kg_values`, Frazier, Powell, Dayanik 2008; Frazier &
Powell 2010), which reads the posterior from the pull counts and empirical means. :func:`imitate`
fits the policy to it with DAgger (Ross, Gordon, Bagnell, "A reduction of imitation learning and
structured prediction to no-regret online learning", AISTATS 2011):

1. iteration 0 plays the teacher; iteration ``i > 0`` plays the current policy (its most
   likely action), in ``episodes`` episodes of the training family each;
2. every visited state is labelled with the teacher's action (or its tied actions) and
   added to the data (the data are aggregated over iterations);
3. the policy is fitted to all the data by maximum likelihood (cross-entropy of the
   teacher's action, minibatches of ``batch_size``, ``epochs`` passes, the policy's own
   optimizer at ``learning_rate``).

The teacher is queried on the states the *learner* visits, so the policy learns to
recover from its own mistakes (DAgger's point). A second teacher, ``"dp"``
(:func:`dp_teacher`), is the Bayes-optimal policy itself on tiny families (the exact
dynamic program of :mod:`agents.bayesian.exact`); it labels a state with its tied optimal
arms as a distribution (uniform over them), and the fit's cross-entropy is then taken
against that distribution (iteration 0 plays an arm drawn from it). Only one-pull
families (``TopK-v0``: a ``Discrete`` action) are supported: both teachers pull one arm
at a time. Afterwards PPO can fine-tune the policy
(:func:`agents.learned.training.train` with ``imitate=`` and ``total_timesteps > 0``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv

from agents.bayesian.bayes_dp import solved
from agents.bayesian.knowledge_gradient import kg_choice
from bandit_envs.wrappers import FlatObservation

__all__ = ["TEACHERS", "ImitationSettings", "dp_teacher", "imitate", "kg_teacher"]


def kg_teacher(
    counts: np.ndarray,
    means: np.ndarray,
    pulls_left: np.ndarray,
    prior: tuple[float, float],
    k: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """KG*'s arm for each row (one env per row; ties at random), as ``agents.make("kg")``.

    The decision of :class:`agents.bayesian.knowledge_gradient.KnowledgeGradient`
    (:func:`~agents.bayesian.knowledge_gradient.kg_choice`: its values, its tie tolerance 1e-12).
    """
    a, b = prior
    counts = np.asarray(counts, dtype=np.float64)
    wins = np.rint(np.asarray(means, dtype=np.float64) * counts)
    out = np.empty(counts.shape[0], dtype=np.int64)
    for row in range(counts.shape[0]):
        alpha, beta = a + wins[row], b + counts[row] - wins[row]
        out[row] = kg_choice(alpha, beta, k, max(int(pulls_left[row]), 1), rng)
    return out


def dp_teacher(
    counts: np.ndarray,
    means: np.ndarray,
    pulls_left: np.ndarray,
    prior: tuple[float, float],
    k: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """The Bayes-optimal arms for each row: a row of weights, uniform over the tied arms.

    The exact DP of the family (:class:`agents.bayesian.exact.BetaBernoulliDP`, through
    :func:`agents.bayesian.bayes_dp.solved`; the budget is the row's pulls made plus
    ``pulls_left``), solved once per family and kept: the arms whose values are within
    1e-12 of the best share the row (the ``bayes_dp`` agent draws one of them). Tiny
    families only (the DP's limit on posterior states). ``rng`` is not used.
    """
    a, b = prior
    counts = np.asarray(counts, dtype=np.int64)
    wins = np.rint(np.asarray(means, dtype=np.float64) * counts).astype(np.int64)
    out = np.zeros(counts.shape, dtype=np.float64)
    for row in range(counts.shape[0]):
        budget = int(counts[row].sum() + pulls_left[row])
        solver = solved(counts.shape[1], k, budget, a, b)
        q = solver.q_values(wins[row], counts[row] - wins[row])
        tied = q >= q.max() - 1e-12
        out[row] = tied / tied.sum()
    return out


#: Teachers by name: ``(counts, means, pulls_left, prior, k, rng) ->`` an arm per row, or
#: a row of weights per row (the teacher's arms: the fit's target distribution).
TEACHERS: dict[str, Callable[..., np.ndarray]] = {"kg": kg_teacher, "dp": dp_teacher}


@dataclass(frozen=True)
class ImitationSettings:
    """How :func:`imitate` runs (the ``imitate`` table of a ``[[train]]`` entry)."""

    teacher: str = "kg"
    iterations: int = 4
    episodes: int = 128
    epochs: int = 4
    batch_size: int = 256
    learning_rate: float = 1e-3

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> ImitationSettings:
        """Checked settings; a ``ValueError`` names a bad key or value."""
        known = {"teacher", "iterations", "episodes", "epochs", "batch_size", "learning_rate"}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"imitate: unknown keys {unknown} (known: {sorted(known)})")
        out = cls(**dict(values))
        if out.teacher not in TEACHERS:
            raise ValueError(f"imitate.teacher={out.teacher!r} must be one of {sorted(TEACHERS)}")
        for name in ("iterations", "episodes", "epochs", "batch_size"):
            value = getattr(out, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"imitate.{name}={value!r} must be an integer >= 1")
        if not (isinstance(out.learning_rate, (int, float)) and 0 < out.learning_rate < 1):
            raise ValueError(f"imitate.learning_rate={out.learning_rate!r} must be in (0, 1)")
        return out


def imitate(
    model: BaseAlgorithm,
    venv: VecEnv,
    transform: FlatObservation,
    settings: ImitationSettings,
    *,
    budget: int,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Fit ``model``'s policy to the teacher with DAgger (module docstring).

    Args:
        model: a PPO/A2C model with a ``Discrete`` action space (``TopK-v0``).
        venv: the training vector env *below* the flattening (``Dict`` observations,
            SB3 ``VecEnv`` with autoreset).
        transform: the policy's observation transform (its ``prior`` and ``k`` are the
            teacher's).
        settings: :class:`ImitationSettings`.
        budget: the family's pull budget (the teacher needs the pulls left).
        seed: seeds the teacher's tie-breaking.
        log: progress lines.

    Returns:
        One entry per iteration: states collected, agreement of the policy with the
        teacher on the new states before fitting, the cross-entropy of the teacher's
        actions on all the data before and after fitting (last epoch), seconds.
    """
    if not isinstance(venv.action_space, spaces.Discrete):
        raise ValueError(
            f"imitation needs a one-pull family (Discrete actions), not {venv.action_space}"
        )
    if transform.prior is None or transform.k is None:
        raise ValueError("imitation needs a transform built with prior=(a, b) (the teacher's)")
    teacher = TEACHERS[settings.teacher]
    rng = np.random.default_rng(seed)
    say = log or (lambda _msg: None)
    policy = model.policy
    states: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    history = []
    for iteration in range(settings.iterations):
        start = time.perf_counter()
        new_obs, new_act, agree = _collect(
            policy, venv, transform, teacher, rng, settings.episodes, budget, iteration == 0
        )
        states.append(new_obs)
        labels.append(new_act)
        x, y = np.concatenate(states), np.concatenate(labels)
        before = _loss(policy, x, y)
        loss = _fit(policy, x, y, settings, rng)
        entry = {
            "iteration": iteration,
            "states": int(len(x)),
            "agreement_before_fit": None if iteration == 0 else round(agree, 4),
            "loss_before_fit": round(before, 4),
            "loss": round(loss, 4),
            "seconds": round(time.perf_counter() - start, 1),
        }
        history.append(entry)
        say(
            f"imitation {iteration}: {entry['states']} states, policy = teacher on "
            f"{'-' if iteration == 0 else f'{agree:.3f}'} of the new ones, loss {loss:.4f}"
        )
    return history


def _collect(
    policy: Any,
    venv: VecEnv,
    transform: FlatObservation,
    teacher: Callable[..., np.ndarray],
    rng: np.random.Generator,
    episodes: int,
    budget: int,
    teacher_plays: bool,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Play ``episodes`` episodes (teacher or policy); every state with the teacher's arm."""
    assert transform.prior is not None and transform.k is not None
    obs = venv.reset()
    done_episodes, same, total = 0, 0, 0
    xs, ys = [], []
    while done_episodes < episodes:
        counts = np.asarray(obs["counts"])
        left = budget - counts.sum(axis=1)
        target = teacher(counts, obs["means"], left, transform.prior, transform.k, rng)
        flat = transform(obs)
        xs.append(flat)
        ys.append(target)
        if teacher_plays:
            action = target if target.ndim == 1 else _draw(target, rng)
        else:
            with torch.no_grad():
                action, _ = policy.predict(flat, deterministic=True)
            if target.ndim == 1:
                same += int(np.sum(action == target))
            else:  # the policy's arm is one of the teacher's
                arm = action < target.shape[1]  # the stop action is never the teacher's
                rows = np.arange(len(target))
                same += int(np.sum(arm & (target[rows, np.where(arm, action, 0)] > 0)))
            total += len(target)
        obs, _, dones, _ = venv.step(np.asarray(action))
        done_episodes += int(np.sum(dones))
    return np.concatenate(xs), np.concatenate(ys), same / total if total else 1.0


def _draw(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One arm per row, drawn with probabilities ``weights`` (rows sum to 1)."""
    cum = np.cumsum(weights, axis=1)
    u = rng.random((len(weights), 1)) * cum[:, -1:]
    return np.minimum((cum <= u).sum(axis=1), weights.shape[1] - 1)


def _targets(y: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(y, dtype=torch.int64 if y.ndim == 1 else torch.float32)


def _cross_entropy(dist: Any, y: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the teacher's arms (an arm, or weights over the arms)."""
    if y.ndim == 1:
        return -dist.log_prob(y).mean()
    logits = dist.distribution.logits
    if y.shape[-1] < logits.shape[-1]:  # the stop action (index n_arms): weight 0
        y = torch.nn.functional.pad(y, (0, logits.shape[-1] - y.shape[-1]))
    return -(y * logits).sum(dim=-1).mean()


def _loss(policy: Any, x: np.ndarray, y: np.ndarray) -> float:
    """Mean cross-entropy of the teacher's actions under the policy."""
    with torch.no_grad():
        dist = policy.get_distribution(torch.as_tensor(x, dtype=torch.float32))
        return float(_cross_entropy(dist, _targets(y)))


def _fit(
    policy: Any,
    x: np.ndarray,
    y: np.ndarray,
    settings: ImitationSettings,
    rng: np.random.Generator,
) -> float:
    """Maximum likelihood of the teacher's actions; returns the last epoch's mean loss."""
    policy.set_training_mode(True)
    saved = [group["lr"] for group in policy.optimizer.param_groups]
    for group in policy.optimizer.param_groups:
        group["lr"] = settings.learning_rate
    xt = torch.as_tensor(x, dtype=torch.float32)
    yt = _targets(y)
    loss_mean = 0.0
    for _ in range(settings.epochs):
        order = torch.as_tensor(rng.permutation(len(x)))
        losses = []
        for lo in range(0, len(x), settings.batch_size):
            idx = order[lo : lo + settings.batch_size]
            dist = policy.get_distribution(xt[idx])
            loss = _cross_entropy(dist, yt[idx])
            policy.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            policy.optimizer.step()
            losses.append(float(loss.detach()))
        loss_mean = float(np.mean(losses))
    for group, lr in zip(policy.optimizer.param_groups, saved, strict=True):
        group["lr"] = lr
    policy.set_training_mode(False)
    return loss_mean
