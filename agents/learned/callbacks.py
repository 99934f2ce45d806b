"""stable-baselines3 callbacks of :func:`agents.learned.training.train`.

A progress bar, a wall-clock or CPU-time limit, and the periodic evaluation that
validates the policy in the mode(s) it could play and saves the best checkpoint:
:class:`PeriodicEval` plays validation episodes one at a time through ``PolicyAgent``
on the benchmark form of the family; :class:`VecValidation` plays them all at once, in
lockstep, on a vector env of the training form (one batched forward pass per step),
tens of times faster, which is what makes learning curves affordable.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
from stable_baselines3.common.callbacks import BaseCallback

from agents.learned.evaluation import VALIDATION_SEED0, summarize
from agents.learned.families import PULL_BY_PULL_ID, episode_score
from agents.learned.saving import policy_agent, save_policy
from agents.runner import run_episode
from bandit_envs.wrappers import FlatObservation

__all__ = ["PeriodicEval", "Progress", "TimeLimit", "VecValidation", "keep_deterministic"]


class Progress(BaseCallback):
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


class TimeLimit(BaseCallback):
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


class PeriodicEval(BaseCallback):
    """Every ``every`` steps: play ``episodes`` validation seeds through ``PolicyAgent``.

    ``modes`` are the ways to play the policy: ``"deterministic"`` (SB3's most likely
    action) and/or ``"sampled"`` (``SampledPolicyAgent``); ``agent_kwargs`` go to the
    ``PolicyAgent`` (e.g. the ``prior`` of ``answer="posterior"``). ``cpu_spent`` is the
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
        progress: Progress | None,
        best_path: Path | None,
        metadata: Mapping[str, Any] | None,
        agent_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.agent_kwargs = dict(agent_kwargs or {})
        self.every, self.episodes, self.modes = every, episodes, tuple(modes)
        self.env_id, self.env_kwargs = env_id, dict(env_kwargs)
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

    def close(self) -> None:
        """Close the validation env."""
        self.env.close()

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
                self.model,
                self.transform,
                self.answer,
                deterministic=mode == "deterministic",
                **self.agent_kwargs,
            )
            s = summarize(mode, [run_episode(self.env, agent, seed=x) for x in seeds])
            entry[mode] = {"regret": s.regret, "regret_ci": s.regret_ci, "misid": s.misid}
            parts.append(f"{mode} regret {s.regret:.4f} ± {s.regret_ci:.4f}, misid {s.misid:.3f}")
        return self._record(entry, parts, cpu, "regret")

    def _record(
        self, entry: dict[str, Any], parts: list[str], cpu: float, key: str
    ) -> dict[str, Any]:
        """Choose the mode, log, keep the best checkpoint; ``key``: what is compared."""
        # The mode this checkpoint would play, and its value: what keep_best compares.
        entry["mode"] = "deterministic" if keep_deterministic(entry) else "sampled"
        entry["regret"] = entry[entry["mode"]]["regret"]
        if key != "regret":
            entry[key] = entry[entry["mode"]][key]
        best = min((h[key] for h in self.history), default=math.inf)
        self.history.append(entry)
        self.log(
            f"eval t={entry['timesteps']} ({entry['seconds']}s): {'; '.join(parts)} "
            f"({self.episodes} validation episodes)"
        )
        if self.progress is not None:
            self.progress.set_postfix(**{key: f"{entry[key]:.4f}", "mode": entry["mode"]})
        if self.best_path is not None and entry[key] < best:
            meta = copy.deepcopy(dict(self.metadata or {}))
            meta["training"] = {**meta.get("training", {}), "best_at": entry}
            meta["policy_agent"]["deterministic"] = keep_deterministic(entry)
            save_policy(self.model, self.best_path, meta)
        self.cpu_spent += time.process_time() - cpu
        return entry


def keep_deterministic(entry: Mapping[str, Any]) -> bool:
    """Sample only if the validation says so clearly (see ``train(sample=None)``).

    Compares the entries' ``score`` (:class:`VecValidation`) or ``regret``.
    """
    det, sam = entry.get("deterministic"), entry.get("sampled")
    if det is None:
        return False
    if sam is None:
        return True
    key = "score" if "score" in det else "regret"
    return not sam[key] < det[key] - det[f"{key}_ci"]


class VecValidation(PeriodicEval):
    """:class:`PeriodicEval` with every validation episode played at once, in lockstep.

    The ``episodes`` validation episodes are the first episodes of the envs of a vector
    env of the *training* form of the family (``env_id``, ``env_kwargs``: the native
    vector env, or ``DummyVecEnv`` for ``TopK-PullByPull-v0``) with ``paired=True``,
    :data:`~agents.learned.evaluation.VALIDATION_SEED0`: the same episodes at every
    evaluation and for every policy of the family. The model's
    ``predict`` gets all observations at once (with the action masks of a masked
    policy and the LSTM states of a recurrent one); ``"sampled"`` draws from torch's
    generator seeded with ``VALIDATION_SEED0`` (and restored after, so training draws
    the same numbers with or without validation). Each entry holds, per mode, the
    mean ``regret``, ``misid`` and task ``score``
    (:func:`~agents.learned.families.episode_score`) with the 95% half-widths
    ``regret_ci`` and ``score_ci``; ``score`` chooses the mode and the best checkpoint.
    Episodes end as in training (the env's projection and empirical answer, when the
    family has them), so the scores are those of the training form of the task.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._venv: Any = None

    def _vec_env(self) -> Any:
        if self._venv is None:
            from agents.learned.vec_env import make_training_env

            self.env.close()
            pull_by_pull = self.env_id.endswith(PULL_BY_PULL_ID)
            kwargs = {**self.env_kwargs, "paired": True} if pull_by_pull else self.env_kwargs
            self._venv, _, _ = make_training_env(
                self.env_id,
                self.episodes,
                seed=None,
                env_kwargs=kwargs,
                transform=self.transform,
                backend="dummy" if pull_by_pull else "auto",
            )
        return self._venv

    def _play(self, deterministic: bool) -> dict[str, float]:
        import numpy as np
        import torch

        venv = self._vec_env()
        n = self.episodes
        venv.seed(VALIDATION_SEED0)
        obs = venv.reset()
        masked = _masked(self.model)
        state, starts = None, np.ones(n, dtype=bool)
        regret, misid, batches = np.zeros(n), np.zeros(n), np.zeros(n)
        finished = np.zeros(n, dtype=bool)
        rng_state = torch.get_rng_state()
        torch.manual_seed(VALIDATION_SEED0)
        try:
            while not finished.all():
                kwargs: dict[str, Any] = {"deterministic": deterministic}
                if masked:
                    from sb3_contrib.common.maskable.utils import get_action_masks

                    kwargs["action_masks"] = get_action_masks(venv)
                if hasattr(self.model.policy, "lstm_actor"):
                    kwargs.update(state=state, episode_start=starts)
                actions, state = self.model.predict(obs, **kwargs)
                obs, _, dones, infos = venv.step(actions)
                starts = dones
                for i in np.flatnonzero(dones & ~finished):
                    info = infos[i]
                    regret[i] = info["aggregate_regret"]
                    misid[i] = float(info["misidentified"])
                    batches[i] = info["batches"]
                    finished[i] = True
        finally:
            torch.set_rng_state(rng_state)
        score = episode_score(self.env_kwargs, regret, misid, batches)
        half = 1.96 / math.sqrt(n) if n > 1 else math.inf
        return {
            "regret": float(regret.mean()),
            "regret_ci": float(regret.std(ddof=1) * half) if n > 1 else math.inf,
            "misid": float(misid.mean()),
            "score": float(score.mean()),
            "score_ci": float(score.std(ddof=1) * half) if n > 1 else math.inf,
        }

    def run(self) -> dict[str, Any]:
        cpu = time.process_time()
        entry: dict[str, Any] = {
            "timesteps": int(self.num_timesteps),
            "seconds": round(time.perf_counter() - self.start, 1),
        }
        parts = []
        for mode in self.modes:
            entry[mode] = self._play(mode == "deterministic")
            s = entry[mode]
            parts.append(
                f"{mode} score {s['score']:.4f} ± {s['score_ci']:.4f}, regret {s['regret']:.4f}, "
                f"misid {s['misid']:.3f}"
            )
        return self._record(entry, parts, cpu, "score")

    def close(self) -> None:
        """Close the validation vector env."""
        if self._venv is not None:
            self._venv.close()
            self._venv = None


def _masked(model: Any) -> bool:
    import inspect

    return "action_masks" in inspect.signature(model.predict).parameters
